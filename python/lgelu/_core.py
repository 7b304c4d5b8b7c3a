"""ctypes bindings of liblgelu's public API (lgelu.h); numpy in and out.

Every call goes to the C library, which runs the same code as the `lgelu`
executable. Long calls (verify, deviation) run in a worker thread while
the calling thread waits in short slices, so Ctrl-C (KeyboardInterrupt)
returns control at once; ctypes releases the GIL during the C call. An
interrupted verification is cancelled through its cancel token (lgelu.h):
bounds, attack and branch and bound stop at their next check; a back-end
solver already running in its child process stops at its own time limit.
"""
import ctypes
import ctypes.util
import os
import threading

import numpy as np

__all__ = ["LgeluError", "Net", "Result", "load", "verify", "verify_vnnlib", "deviation", "hardness_step",
           "library_path", "version"]

STATUS_NAMES = ["ok", "nomem", "io", "format", "arg", "solver", "timeout", "numeric", "unsupported"]
VERDICTS = {0: "unknown", 1: "robust", 2: "violated"}


class LgeluError(Exception):
    """A failed lgelu call: `status` is the status name ("io", "format",
    "arg", ...) and `message` lgelu's message (file, line, what was expected)."""

    def __init__(self, status, message):
        self.status = status
        self.message = message
        super().__init__(f"{status}: {message}" if message else status)


class _Opts(ctypes.Structure):
    _fields_ = [("solver", ctypes.c_char_p), ("timeout_s", ctypes.c_double), ("seed", ctypes.c_ulong),
                ("margin", ctypes.c_double), ("clip_lo", ctypes.c_double), ("clip_hi", ctypes.c_double),
                ("attack", ctypes.c_int), ("threads", ctypes.c_int), ("verbose", ctypes.c_int),
                ("cancel", ctypes.c_void_p)]


_lib = None
_lib_path = None
_lib_lock = threading.Lock()

_P = ctypes.c_void_p
_D = ctypes.c_double
_DP = ctypes.POINTER(ctypes.c_double)
_IP = ctypes.POINTER(ctypes.c_int)
_SIGS = {
    "lgelu_version": (ctypes.c_char_p, []),
    "lgelu_status_str": (ctypes.c_char_p, [ctypes.c_int]),
    "lgelu_errmsg": (ctypes.c_char_p, []),
    "lgelu_net_load": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_P)]),
    "lgelu_net_save": (ctypes.c_int, [_P, ctypes.c_char_p]),
    "lgelu_net_free": (None, [_P]),
    "lgelu_net_n_in": (ctypes.c_int, [_P]),
    "lgelu_net_n_out": (ctypes.c_int, [_P]),
    "lgelu_net_n_layers": (ctypes.c_int, [_P]),
    "lgelu_net_layer": (ctypes.c_int, [_P, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), _IP, _DP]),
    "lgelu_net_eval": (ctypes.c_int, [_P, _DP, ctypes.c_size_t, _DP]),
    "lgelu_net_relu": (ctypes.c_int, [_P, ctypes.POINTER(_P)]),
    "lgelu_deviation": (ctypes.c_int, [_P, _P, _DP, ctypes.c_size_t, _D, _D, _D, _DP]),
    "lgelu_verify_opts_default": (_Opts, []),
    "lgelu_verify_robust": (ctypes.c_int, [_P, _DP, _D, ctypes.c_int, ctypes.POINTER(_Opts), ctypes.POINTER(_P)]),
    "lgelu_verify_vnnlib": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.POINTER(_Opts), ctypes.POINTER(_P)]),
    "lgelu_result_free": (None, [_P]),
    "lgelu_result_verdict": (ctypes.c_int, [_P]),
    "lgelu_result_reason": (ctypes.c_char_p, [_P]),
    "lgelu_result_method": (ctypes.c_char_p, [_P]),
    "lgelu_result_timed_out": (ctypes.c_int, [_P]),
    "lgelu_result_seconds": (_D, [_P]),
    "lgelu_result_label": (ctypes.c_int, [_P]),
    "lgelu_result_counterexample": (_DP, [_P, _IP]),
    "lgelu_result_outputs": (_DP, [_P, _IP]),
    "lgelu_result_unstable_total": (ctypes.c_int, [_P]),
    "lgelu_result_unstable": (_IP, [_P, _IP]),
    "lgelu_result_write": (ctypes.c_int, [_P, ctypes.c_char_p]),
    "lgelu_cancel_new": (ctypes.c_int, [ctypes.POINTER(_P)]),
    "lgelu_cancel_request": (None, [_P]),
    "lgelu_cancel_free": (None, [_P]),
    "lgelu_hardness_step": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, _D, _D, _D, _D, _D, _DP, ctypes.c_int,
                                           _DP, _DP]),
}


def _candidates():
    env = os.environ.get("LGELU_LIB")
    if env:
        return [env]  # an explicit choice is the only one tried
    here = os.path.dirname(os.path.abspath(__file__))
    out = [os.path.join(here, n) for n in ("liblgelu.so", "liblgelu.so.0")]
    found = ctypes.util.find_library("lgelu")
    out.append(found or "liblgelu.so.0")
    return out


def _load_lib():
    global _lib, _lib_path
    with _lib_lock:
        if _lib is not None:
            return _lib
        errors = []
        for c in _candidates():
            if os.sep in c and not os.path.exists(c):
                errors.append(f"{c}: no such file")
                continue
            try:
                lib = ctypes.CDLL(c)
            except OSError as e:
                errors.append(str(e))
                continue
            for name, (res, args) in _SIGS.items():
                f = getattr(lib, name)
                f.restype = res
                f.argtypes = args
            _lib, _lib_path = lib, c
            return lib
        raise LgeluError("io", "cannot load liblgelu (set LGELU_LIB to the path of liblgelu.so): " + "; ".join(errors))


def library_path():
    """The shared library in use (loading it if needed)."""
    _load_lib()
    return _lib_path


def version():
    return _load_lib().lgelu_version().decode()


def _check(st):
    if st != 0:
        lib = _load_lib()
        name = STATUS_NAMES[st] if 0 <= st < len(STATUS_NAMES) else str(st)
        raise LgeluError(name, lib.lgelu_errmsg().decode(errors="replace"))


def _dptr(a):
    return a.ctypes.data_as(_DP)


def _run(nets, fn, *args, cancel=None):
    """fn(*args) in a worker thread that holds the Nets it uses (they are
    not freed before it ends, even if the caller closes them); the caller
    waits in 0.1 s slices so a KeyboardInterrupt is raised promptly. On an
    interrupt the C call's cancel token (if any) is requested, so the call
    stops at its next deadline check; the worker frees the token. Returns
    fn's value or raises its exception."""
    box = {}
    for n in nets:
        n._acquire()
    lib = _load_lib()

    def work():
        try:
            box["v"] = fn(*args)
        except BaseException as e:  # handed to the caller
            box["e"] = e
        finally:
            for n in nets:
                n._release()
            if cancel:
                lib.lgelu_cancel_free(cancel)

    t = threading.Thread(target=work, name="lgelu-call", daemon=True)
    t.start()
    try:
        while t.is_alive():
            t.join(0.1)
    except BaseException:
        if cancel:
            lib.lgelu_cancel_request(cancel)
        raise
    if "e" in box:
        raise box["e"]
    return box["v"]


def _cancel_token():
    h = _P()
    _check(_load_lib().lgelu_cancel_new(ctypes.byref(h)))
    return h


class Net:
    """A network handle (native .lgnet or ONNX). Read-only after loading:
    one Net may be used by several threads at once."""

    def __init__(self, handle):
        self._h = _P(handle)
        self._users = 0  # calls running in worker threads
        self._closing = False
        self._lock = threading.Lock()
        lib = _load_lib()
        self.n_in = lib.lgelu_net_n_in(self._h)
        self.n_out = lib.lgelu_net_n_out(self._h)

    def _acquire(self):
        with self._lock:
            if not self._h or self._closing:
                raise LgeluError("arg", "the network was closed")
            self._users += 1

    def _release(self):
        with self._lock:
            self._users -= 1
            free = self._closing and self._users == 0
        if free:
            self._free()

    def _free(self):
        if self._h:
            _load_lib().lgelu_net_free(self._h)
            self._h = _P()

    def close(self):
        """Free the network; deferred until calls still running on it end."""
        with self._lock:
            self._closing = True
            busy = self._users > 0
        if not busy:
            self._free()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        if not self._h or self._closing:
            raise LgeluError("arg", "the network was closed")
        return self._h

    def _rows(self, x, what="x"):
        a = np.ascontiguousarray(np.asarray(x, dtype=np.float64))
        if a.ndim == 1 and a.shape[0] == self.n_in:
            return a.reshape(1, self.n_in), True
        if a.ndim == 2 and a.shape[1] == self.n_in:
            return a, False
        raise LgeluError("arg", f"{what}: expected shape ({self.n_in},) or (n, {self.n_in}) for a network of "
                                f"{self.n_in} inputs, got {a.shape}")

    @property
    def layers(self):
        """[(activation, n_out, parameter)] per layer, as `lgelu info` lists
        them: parameter is λ (lgelu), β (swish), the slope (prelu), 1.0
        (gelu) or None."""
        lib = _load_lib()
        h = self._handle()
        out = []
        for k in range(lib.lgelu_net_n_layers(h)):
            a, n, p = ctypes.c_char_p(), ctypes.c_int(), ctypes.c_double()
            _check(lib.lgelu_net_layer(h, k, ctypes.byref(a), ctypes.byref(n), ctypes.byref(p)))
            out.append((a.value.decode(), n.value, None if p.value != p.value else p.value))
        return out

    def eval(self, x):
        """Outputs in double precision: x of shape (n_in,) → (n_out,), or
        (n, n_in) → (n, n_out)."""
        X, single = self._rows(x)
        Y = np.empty((X.shape[0], self.n_out), dtype=np.float64)
        _check(_load_lib().lgelu_net_eval(self._handle(), _dptr(X), X.shape[0], _dptr(Y)))
        return Y[0] if single else Y

    def save(self, path):
        """Write ONNX (a name ending in .onnx) or the native format."""
        _check(_load_lib().lgelu_net_save(self._handle(), os.fsencode(path)))

    def relu(self):
        """The ReLU substitution (`lgelu relu`): a new Net."""
        h = _P()
        _check(_load_lib().lgelu_net_relu(self._handle(), ctypes.byref(h)))
        return Net(h.value)

    def __repr__(self):
        return f"<lgelu.Net {self.n_in} -> {self.n_out}>"


def load(path):
    """Load a network file (native or ONNX; .gz read transparently)."""
    h = _P()
    _check(_load_lib().lgelu_net_load(os.fsencode(path), ctypes.byref(h)))
    return Net(h.value)


class Result:
    """Outcome of a verification: verdict ("robust", "violated", "unknown"),
    counterexample (numpy [n_in], re-checked, or None) and its outputs,
    seconds, unstable (per-layer numpy counts) and unstable_total, method,
    reason, timed_out, label (robustness) or None."""

    def __init__(self, h):
        lib = _load_lib()
        self.verdict = VERDICTS.get(lib.lgelu_result_verdict(h), "unknown")
        self.reason = lib.lgelu_result_reason(h).decode()
        self.method = lib.lgelu_result_method(h).decode()
        self.timed_out = bool(lib.lgelu_result_timed_out(h))
        self.seconds = lib.lgelu_result_seconds(h)
        lab = lib.lgelu_result_label(h)
        self.label = lab if lab >= 0 else None
        n = ctypes.c_int(0)
        p = lib.lgelu_result_counterexample(h, ctypes.byref(n))
        self.counterexample = np.ctypeslib.as_array(p, (n.value,)).copy() if p else None
        p = lib.lgelu_result_outputs(h, ctypes.byref(n))
        self.outputs = np.ctypeslib.as_array(p, (n.value,)).copy() if p else None
        self.unstable_total = lib.lgelu_result_unstable_total(h)
        q = lib.lgelu_result_unstable(h, ctypes.byref(n))
        self.unstable = np.ctypeslib.as_array(q, (n.value,)).copy() if q and n.value else np.zeros(0, dtype=np.intc)
        self._text = None

    @property
    def robust(self):
        return self.verdict == "robust"

    @property
    def violated(self):
        return self.verdict == "violated"

    def write_counterexample(self, path):
        """Write the VNN-COMP result file: `sat` and ((X_i v) ... (Y_j v))
        in shortest round-trip decimals (what `lgelu cex` reads), or
        `unsat` / `unknown` / `timeout`."""
        with open(path, "w") as f:
            if self.violated:
                f.write("sat\n(")
                f.write("\n ".join([f"(X_{i} {float(v)!r})" for i, v in enumerate(self.counterexample)] +
                                   [f"(Y_{j} {float(v)!r})" for j, v in enumerate(self.outputs)]))
                f.write(")\n")
            elif self.robust:
                f.write("unsat\n")
            else:
                f.write("timeout\n" if self.timed_out else "unknown\n")

    def __repr__(self):
        return (f"<lgelu.Result {self.verdict} by {self.method or '-'} in {self.seconds:.3f} s, "
                f"{self.unstable_total} unstable>")


def _opts(timeout, solver, margin, seed, clip, attack, threads, verbose):
    o = _load_lib().lgelu_verify_opts_default()
    o.solver = solver.encode()
    o.timeout_s = float(timeout) if timeout is not None else 0.0
    o.seed = int(seed)
    o.margin = float(margin)
    o.clip_lo, o.clip_hi = (float(clip[0]), float(clip[1])) if clip is not None else (-np.inf, np.inf)
    o.attack = 1 if attack else 0
    o.threads = int(threads)
    o.verbose = int(verbose)
    o.cancel = None
    return o


def _result_of(call):
    h = _P()
    _check(call(ctypes.byref(h)))
    try:
        return Result(h)
    finally:
        _load_lib().lgelu_result_free(h)


def verify(net, x, eps, label=None, timeout=60.0, solver="auto", margin=0.0, seed=1, clip=(0.0, 1.0), attack=True,
           threads=0, verbose=0):
    """Local robustness of `label` (None: the network's prediction at x) on
    the box [x − eps, x + eps] ∩ [clip[0], clip[1]] (clip=None: no clip),
    as `lgelu verify NET --input X --eps E [--label L]`. solver: "auto",
    "glpk", "z3" or "none". Returns a Result."""
    X, single = net._rows(x)
    if not single:
        raise LgeluError("arg", f"x: expected one input of shape ({net.n_in},), got {np.shape(x)}")
    o = _opts(timeout, solver, margin, seed, clip, attack, threads, verbose)
    lab = -1 if label is None else int(label)
    lib = _load_lib()
    h = net._handle()
    tok = _cancel_token()
    o.cancel = tok
    return _run([net], _result_of, lambda out: lib.lgelu_verify_robust(h, _dptr(X), float(eps), lab, ctypes.byref(o),
                                                                     out), cancel=tok)


def verify_vnnlib(net, path, timeout=60.0, solver="auto", margin=0.0, seed=1, attack=True, threads=0, verbose=0):
    """The property of a VNN-LIB file, as `lgelu verify NET --vnnlib P`."""
    o = _opts(timeout, solver, margin, seed, None, attack, threads, verbose)
    lib = _load_lib()
    h = net._handle()
    p = os.fsencode(path)
    tok = _cancel_token()
    o.cancel = tok
    return _run([net], _result_of, lambda out: lib.lgelu_verify_vnnlib(h, p, ctypes.byref(o), out), cancel=tok)


def deviation(relu_net, ref_net, x, eps, clip=(0.0, 1.0)):
    """Certified bound on max |f_relu(x') − f_ref(x')|∞ over the ball of
    radius eps around x (clipped to clip): a float for x of shape (n_in,),
    an array of n bounds for (n, n_in). The bound of `lgelu check`."""
    X, single = relu_net._rows(x)
    if ref_net.n_in != relu_net.n_in:
        raise LgeluError("arg", f"the networks have {relu_net.n_in} and {ref_net.n_in} inputs")
    d = np.empty(X.shape[0], dtype=np.float64)
    lo, hi = (float(clip[0]), float(clip[1])) if clip is not None else (-np.inf, np.inf)
    lib = _load_lib()
    hr, hg = relu_net._handle(), ref_net._handle()
    _run([relu_net, ref_net], lambda: _check(lib.lgelu_deviation(hr, hg, _dptr(X), X.shape[0], float(eps), lo, hi, _dptr(d))))
    return float(d[0]) if single else d


def hardness_step(s, t, grads, lr, c=9.0, optim="sgd", momentum=0.9, s_update="lambda"):
    """The C trainer's step(s) on one λ-GELU hardness parameter s given
    ∂L/∂λ for each step (DESIGN.md §1); returns (s, λ) after them."""
    g = np.ascontiguousarray(np.atleast_1d(np.asarray(grads, dtype=np.float64)))
    so, lo = ctypes.c_double(), ctypes.c_double()
    _check(_load_lib().lgelu_hardness_step(optim.encode(), s_update.encode(), float(t), float(lr), float(c),
                                           float(momentum), float(s), _dptr(g), g.shape[0], ctypes.byref(so),
                                           ctypes.byref(lo)))
    return so.value, lo.value
