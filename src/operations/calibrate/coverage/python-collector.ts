/**
 * A `sitecustomize` module that every Python process of the test step imports at startup (its
 * folder leads PYTHONPATH), so a suite is covered however it starts Python: pytest, unittest, a
 * script, or subprocesses of those. It records the lines run in files under the work dir (outside
 * virtual environments and site-packages) and at exit writes `{ path: [[from, to], …] }` into
 * GENESIS_PYTHON_LINES, one file per process.
 *
 * Built on the standard library alone (sys.monitoring where Python has it, 3.12 on; sys.settrace
 * before), so it needs nothing installed in the gate's image: Debian's python3-coverage would
 * serve, but an image from a registry need not have it. Each line is reported once and then its
 * event is turned off, so the suite runs at close to its own speed on 3.12 and later. Then the
 * next `sitecustomize` on the path (Debian ships one) runs, as it would have without this one.
 */
export const PYTHON_COLLECTOR = String.raw`
import atexit, json, os, sys, threading

_root = os.path.realpath(os.getcwd())
_out = os.environ.get('GENESIS_PYTHON_LINES')
_here = os.path.dirname(os.path.abspath(__file__))
_lines = {}
_ours = {}

def _wanted(filename):
    # The set of lines of a file under the work dir, or None; cached, as realpath costs a system call.
    known = _ours.get(filename, False)
    if known is False:
        path = os.path.realpath(filename) if filename and not filename.startswith('<') else ''
        skipped = ('site-packages', 'dist-packages', '.venv', 'venv', '.tox', '.nox', '__pycache__')
        known = None
        if path.startswith(_root + os.sep) and not any(p in skipped for p in path.split(os.sep)):
            known = _lines.setdefault(path, set())
        _ours[filename] = known
    return known

if _out:
    monitoring = getattr(sys, 'monitoring', None)
    if monitoring is not None:
        _tool = monitoring.COVERAGE_ID
        monitoring.use_tool_id(_tool, 'genesis')
        def _on_line(code, line):
            seen = _wanted(code.co_filename)
            if seen is not None:
                seen.add(line)
            return monitoring.DISABLE
        monitoring.register_callback(_tool, monitoring.events.LINE, _on_line)
        monitoring.set_events(_tool, monitoring.events.LINE)
    else:
        def _global(frame, event, arg):
            seen = _wanted(frame.f_code.co_filename)
            if seen is None:
                return None
            def _local(frame, event, arg):
                if event == 'line':
                    seen.add(frame.f_lineno)
                return _local
            return _local
        sys.settrace(_global)
        threading.settrace(_global)

    def _write():
        out = {}
        for path, seen in _lines.items():
            runs = []
            for n in sorted(seen):
                if runs and runs[-1][1] == n - 1:
                    runs[-1][1] = n
                else:
                    runs.append([n, n])
            out[os.path.relpath(path, _root).replace(os.sep, '/')] = runs
        try:
            with open(os.path.join(_out, '%d.json' % os.getpid()), 'w') as f:
                json.dump(out, f)
        except OSError:
            pass
    atexit.register(_write)

def _chain():
    import importlib.machinery, importlib.util
    rest = [p for p in sys.path if os.path.abspath(p or '.') != _here]
    spec = importlib.machinery.PathFinder.find_spec('sitecustomize', rest)
    if spec and spec.loader:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)

_chain()
`;
