/**
 * The pytest plugin every pytest of a test step loads (`PYTEST_PLUGINS`, from the read-only canary
 * directory on `PYTHONPATH`), as text: written per gate, with that gate's nonce in it.
 *
 * After collection (and after every other plugin's selection, so `-k` and `-m` keep them) it adds
 * two canaries at the end of the run: one that must pass, and one that must fail (when it is the
 * only failure the plugin sets the session's exit status back to OK, so the world's exit code is
 * untouched; it still counts in pytest's summary and report, as in the gate's comparison of them). Each checks that `assert`
 * and unittest's assertions still raise for a false claim, and only for one. A report hook that
 * turns failures into passes, or a module that disables the assertions, makes the must-fail one
 * pass or the must-pass one fail. Python has nothing to freeze.
 */
export function pytestPlugin(nonce: string): string {
  return `# Genesis gate canary. Read-only; changes nothing in a world but what a world must not change.
import secrets
import unittest

import pytest

NONCE = ${JSON.stringify(nonce)}
PROC = "pytest-" + secrets.token_hex(6)


def _assertions_hold():
    case = unittest.TestCase()
    false_claims = [
        lambda: _plain_assert(False),
        lambda: case.assertEqual(1, 2),
        lambda: case.assertTrue(False),
        lambda: case.assertFalse(True),
        lambda: case.assertIn(1, []),
        lambda: case.assertIsNone(1),
        lambda: case.assertRaises(ValueError, lambda: None),
        lambda: pytest.fail("x"),
    ]
    for claim in false_claims:
        try:
            claim()
        except BaseException as e:  # pytest.fail raises outside Exception
            if not isinstance(e, (AssertionError, pytest.fail.Exception)):
                return False
            continue
        return False
    try:
        _plain_assert(True)
        case.assertEqual(1, 1)
    except BaseException:
        return False
    return True


def _plain_assert(value):
    assert value


class GenesisCanary(pytest.Item):
    def __init__(self, *, must_fail, **kwargs):
        super().__init__(**kwargs)
        self.must_fail = must_fail

    def runtest(self):
        holds = _assertions_hold()
        if self.must_fail and holds:
            raise AssertionError("fails as it must")
        if not self.must_fail and not holds:
            raise AssertionError("assertions do not hold")

    def reportinfo(self):
        return self.path, 0, self.name

    def repr_failure(self, excinfo):
        return str(excinfo.value)


_failed_as_it_must = []


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    if not items:
        return
    name = "genesis-canary " + NONCE + " " + PROC + " "
    # Last, so that an -x run stops after it and not before the world's own tests.
    items.extend([
        GenesisCanary.from_parent(session, name=name + "must-pass", must_fail=False),
        GenesisCanary.from_parent(session, name=name + "must-fail", must_fail=True),
    ])


def pytest_runtest_logreport(report):
    if report.when == "call" and report.failed and report.nodeid.endswith(" must-fail") and NONCE in report.nodeid:
        _failed_as_it_must.append(report.nodeid)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    # The must-fail canary's failure is the only one: the run is the world's, and passed.
    if session.testsfailed and session.testsfailed == len(_failed_as_it_must) and session.exitstatus == pytest.ExitCode.TESTS_FAILED:
        session.exitstatus = pytest.ExitCode.OK
`;
}
