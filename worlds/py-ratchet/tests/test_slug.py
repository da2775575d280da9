import pytest

from textkit.slug import slugify


@pytest.mark.parametrize("text, slug", [
    ("Hello World", "hello-world"),
    ("  spaces  around  ", "spaces-around"),
    ("Ünïcode & symbols!", "n-code-symbols"),
    ("already-a-slug", "already-a-slug"),
])
def test_slugify(text, slug):
    assert slugify(text) == slug


def test_empty():
    assert slugify("") == ""
