from textkit.wrap import wrap


def test_wraps_at_width():
    assert wrap("the quick brown fox jumps", 10) == ["the quick", "brown fox", "jumps"]


def test_long_word_stands_alone():
    assert wrap("a extraordinarily b", 5) == ["a", "extraordinarily", "b"]


def test_empty_text_has_no_lines():
    assert wrap("", 10) == []
