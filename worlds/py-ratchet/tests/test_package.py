# Runs for every candidate: the package itself imports.
import textkit


def test_package_imports():
    assert textkit.__doc__
