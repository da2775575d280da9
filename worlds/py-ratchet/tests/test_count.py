from textkit.count import word_count


def test_counts_words():
    assert word_count("one two  three\nfour") == 4


def test_empty():
    assert word_count("   ") == 0
