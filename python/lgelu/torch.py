"""lgelu.torch — PyTorch modules with lgelu's parameterisation, annealing
and ONNX export (docs/LIBRARY.md "PyTorch", DESIGN.md §1).

    model = nn.Sequential(nn.Linear(784, 64), LambdaGELU(), nn.Linear(64, 10))
    opt = LambdaSpace(torch.optim.SGD(param_groups(model, lr=0.05), lr=0.05, momentum=0.9))
    anneal = Anneal(model, total_steps, start=0.25)           # λ → λ_target = 2/(E·√(2π))
    for step in range(total_steps):
        anneal(step)                                            # before the forward, as `lgelu train`
        loss = ...; opt.zero_grad(); loss.backward(); opt.step()
    export_onnx(model, "net.onnx", torch.zeros(1, 784))         # lgelu reads each λ back
    relu_model = to_relu(model)                                 # what `lgelu relu` gives

- LambdaGELU: f(x) = x·Φ(λx), λ = 1 + softplus(s/t) (t = 0.1 default), s
  a parameter (0 at init: λ = 1 + ln 2, as lgelu's trainer).
- SwishBeta: f(x) = x·σ(βx), β = 1 + softplus(s/t), same rates.
- PReLU: one slope a for the layer (0.25 at init), learned as itself.
- param_groups: weights with weight decay; biases, s and slopes without;
  s at rate c·lr (c = 9 default), slopes at lr — the C trainer's rates.
- LambdaSpace: the C trainer's default `--s-update lambda`: the optimiser
  steps λ itself with ∂L/∂λ (its moments kept in λ units), λ is floored at
  1.001 (a clipped step zeroes the first moment) and s = t·log(e^{λ−1} − 1)
  is solved back. s_update="s" leaves the plain step on s.
- Anneal: learn λ until floor(start·total); then freeze s and move each
  layer's λ (β) linearly to its target by the last step; PReLU slopes to 0.
- to_relu: a copy with nn.ReLU for every LambdaGELU, SwishBeta, PReLU and
  nn.GELU (lgelu's substitution).
- export_onnx: torch.onnx.export with each λ-GELU written as the pattern
  lgelu imports, x·0.5·(1 + erf(λ·x/√2)) (float32 files: lgelu reads λ
  within one float32 ulp, docs/FORMATS.md), Swish as x·σ(β·x), PReLU as
  PRelu; t goes to the metadata key "lgelu.t".
"""
import copy
import math

import torch
from torch import nn

__all__ = ["LambdaGELU", "SwishBeta", "PReLU", "param_groups", "LambdaSpace", "Anneal", "to_relu", "export_onnx",
           "lambda_target", "beta_target", "hardness_modules", "LAMBDA_FLOOR"]

LAMBDA_FLOOR = 1.001  # lowest λ of the λ-space step (train/optim.h)
_SQRT2 = math.sqrt(2.0)
_LN2 = math.log(2.0)


def lambda_target(tolerance=0.005):
    """λ_target = 2/(E·√(2π)) for a Heaviside tolerance E (≈ 159.6 for 0.005)."""
    return 2.0 / (tolerance * math.sqrt(2.0 * math.pi))


def beta_target(lam_target):
    """The Swish β of the same tolerance as λ_target: ln2·√(2π)·λ_target."""
    return _LN2 * math.sqrt(2.0 * math.pi) * lam_target


def _softplus(z):
    """log(1 + e^z) in float64 (core/act.c's lg_softplus); above z = 40
    it is z to double precision, and the gradient is σ(z) everywhere."""
    return nn.functional.softplus(z.double(), beta=1, threshold=40)


def _s_from_param(p, t):
    """s with 1 + softplus(s/t) = p (p > 1): t·(y + log(1 − e^{−y})), y = p − 1."""
    y = p - 1.0
    return t * (y + math.log(-math.expm1(-y)))


class _Hardness(nn.Module):
    """A layer-wide parameter p = 1 + softplus(s/t), s learned until
    annealing fixes p."""

    def __init__(self, t=0.1, s=0.0, init=None):
        super().__init__()
        if not t > 0:
            raise ValueError(f"t must be > 0, got {t}")
        self.t = float(t)
        if init is not None:
            if not init > 1.0:
                raise ValueError(f"the initial value must be > 1, got {init}")
            s = _s_from_param(float(init), self.t)
        self.s = nn.Parameter(torch.tensor(float(s), dtype=torch.float32))
        self.fixed = None  # float once annealing sets the parameter

    def param(self):
        """The parameter (λ or β) as a float64 tensor (differentiable in s)."""
        if self.fixed is not None:
            return torch.tensor(self.fixed, dtype=torch.float64)
        return 1.0 + _softplus(self.s.double() / self.t)

    def value(self):
        return float(self.param())

    def fix(self, v):
        """Set the parameter (annealing); s is frozen from then on."""
        self.fixed = float(v)
        self.s.requires_grad_(False)


class LambdaGELU(_Hardness):
    """λ-GELU x·Φ(λx) with λ = 1 + softplus(s/t) (DESIGN.md §1). lam=…
    starts at that λ instead of s."""

    def __init__(self, t=0.1, s=0.0, lam=None):
        super().__init__(t, s, lam)

    @property
    def lam(self):
        return self.value()

    def forward(self, x):
        lam = self.param().to(x.dtype)
        return x * 0.5 * (1.0 + torch.erf(lam * x / _SQRT2))

    def extra_repr(self):
        return f"lam={self.value():.6g}, t={self.t}"


class SwishBeta(_Hardness):
    """Swish-β x·σ(βx) with β = 1 + softplus(s/t)."""

    def __init__(self, t=0.1, s=0.0, beta=None):
        super().__init__(t, s, beta)

    @property
    def beta(self):
        return self.value()

    def forward(self, x):
        return x * torch.sigmoid(self.param().to(x.dtype) * x)

    def extra_repr(self):
        return f"beta={self.value():.6g}, t={self.t}"


class PReLU(nn.PReLU):
    """One slope a for the whole layer (0.25 at init), learned as itself;
    annealing moves it to 0."""

    def __init__(self, init=0.25):
        super().__init__(num_parameters=1, init=init)
        self.fixed = None

    def fix(self, v):
        self.fixed = float(v)
        with torch.no_grad():
            self.weight.fill_(self.fixed)
        self.weight.requires_grad_(False)

    def value(self):
        return float(self.weight.detach()[0])


def hardness_modules(model):
    """The LambdaGELU, SwishBeta and PReLU modules of model, in order."""
    return [m for m in model.modules() if isinstance(m, (_Hardness, PReLU))]


def param_groups(model, lr, c=9.0, weight_decay=0.0):
    """Parameter groups with the C trainer's rates: weights (ndim ≥ 2) with
    weight_decay; biases without; each s of LambdaGELU/SwishBeta at c·lr
    without decay (group key "lgelu_hardness" marks it for LambdaSpace);
    PReLU slopes at lr without decay."""
    hard, slopes, seen = [], [], set()
    for m in hardness_modules(model):
        if isinstance(m, _Hardness):
            hard.append(m)
            seen.add(id(m.s))
        else:
            slopes.append(m.weight)
            seen.add(id(m.weight))
    weights, biases = [], []
    for p in model.parameters():
        if id(p) in seen:
            continue
        (weights if p.ndim >= 2 else biases).append(p)
    groups = [{"params": weights, "weight_decay": weight_decay}, {"params": biases, "weight_decay": 0.0}]
    lgelu_s = [m for m in hard if isinstance(m, LambdaGELU)]
    swish_s = [m for m in hard if isinstance(m, SwishBeta)]
    if lgelu_s:
        groups.append({"params": [m.s for m in lgelu_s], "lr": c * lr, "weight_decay": 0.0, "lgelu_hardness": True,
                       "lgelu_t": [m.t for m in lgelu_s]})
    if swish_s:  # swish's s steps like lgelu's plain update (train/optim.h)
        groups.append({"params": [m.s for m in swish_s], "lr": c * lr, "weight_decay": 0.0})
    if slopes:
        groups.append({"params": slopes, "lr": lr, "weight_decay": 0.0})
    return [g for g in groups if g["params"]]


class LambdaSpace:
    """Wrap a torch optimiser built on param_groups(...) so that each
    λ-GELU s takes the C trainer's λ-space step (s_update="lambda", the
    default of `lgelu train`): the optimiser sees λ and ∂L/∂λ, the new λ is
    floored at 1.001 (clipping zeroes that entry's first moment), and s is
    solved back. s_update="s" is the plain step on s (the optimiser alone)."""

    def __init__(self, optimizer, s_update="lambda", floor=LAMBDA_FLOOR):
        if s_update not in ("lambda", "s"):
            raise ValueError(f"s_update: expected 'lambda' or 's', got {s_update!r}")
        self.optimizer = optimizer
        self.s_update = s_update
        self.floor = floor

    @property
    def param_groups(self):
        return self.optimizer.param_groups

    def zero_grad(self, set_to_none=True):
        self.optimizer.zero_grad(set_to_none=set_to_none)

    def state_dict(self):
        return self.optimizer.state_dict()

    def load_state_dict(self, d):
        self.optimizer.load_state_dict(d)

    def step(self):
        todo = []
        if self.s_update == "lambda":
            for g in self.optimizer.param_groups:
                if not g.get("lgelu_hardness"):
                    continue
                for p, t in zip(g["params"], g["lgelu_t"]):
                    if p.grad is None or not p.requires_grad:
                        continue
                    with torch.no_grad():
                        z = p.double() / t
                        lam = 1.0 + _softplus(z)
                        g_lam = p.grad.double() / (torch.sigmoid(z) / t)  # ∂L/∂λ = ∂L/∂s / (dλ/ds)
                        p.copy_(lam.to(p.dtype))
                        p.grad.copy_(g_lam.to(p.dtype))
                    todo.append((p, t))
        self.optimizer.step()
        with torch.no_grad():
            for p, t in todo:
                lam = float(p)
                if not lam >= self.floor:  # clipped (or NaN): no momentum against the floor
                    lam = lam if lam != lam else self.floor
                    st = self.optimizer.state.get(p, {})
                    for k in ("momentum_buffer", "exp_avg"):
                        if st.get(k) is not None:
                            st[k].zero_()
                p.fill_(_s_from_param(lam, t))


class Anneal:
    """The annealing schedule of `lgelu anneal` / `lgelu train
    --anneal-start` as a callback: call anneal(step) with the 0-based step
    before each forward. Until floor(start·total_steps) every parameter is
    learned; from there s is frozen and each layer's λ moves linearly from
    its value at the switch to λ_target, exactly λ_target at the last step
    (Swish β to β_target of the same tolerance, PReLU slopes to 0)."""

    def __init__(self, model, total_steps, start=0.25, lambda_target=None, tolerance=None):
        if not 0.0 <= start <= 1.0:
            raise ValueError(f"start must be in [0, 1], got {start}")
        if lambda_target is not None and tolerance is not None:
            raise ValueError("give lambda_target or tolerance, not both")
        lt = lambda_target if lambda_target is not None else globals()["lambda_target"](tolerance or 0.005)
        if not (lt >= 1.0 and math.isfinite(lt)):
            raise ValueError(f"lambda_target must be a finite number >= 1, got {lt}")
        self.model = model
        self.total = int(total_steps)
        self.start = start
        self.lambda_target = lt
        self.switch_step = max(0, min(self.total, int(math.floor(start * self.total))))
        self.p0 = None

    def target(self, m):
        if isinstance(m, LambdaGELU):
            return self.lambda_target
        if isinstance(m, SwishBeta):
            return beta_target(self.lambda_target)
        return 0.0

    def value_at(self, p0, target, step):
        """lg_anneal_lambda_at (anneal/schedule.c)."""
        sw, total = self.switch_step, self.total
        if step < sw or total <= sw:
            return p0
        if step >= total - 1:
            return target
        return p0 + (target - p0) * (step - sw + 1) / (total - sw)

    def __call__(self, step):
        if step < self.switch_step:
            return
        mods = hardness_modules(self.model)
        if self.p0 is None:
            self.p0 = [m.value() for m in mods]
        for m, p0 in zip(mods, self.p0):
            m.fix(self.value_at(p0, self.target(m), step))


def to_relu(model, inplace=False):
    """lgelu's substitution on a module tree: every LambdaGELU, SwishBeta,
    PReLU and nn.GELU becomes nn.ReLU (a copy unless inplace)."""
    root = model if inplace else copy.deepcopy(model)
    if isinstance(root, (_Hardness, PReLU, nn.GELU)):
        return nn.ReLU()
    for name, child in list(root.named_children()):
        if isinstance(child, (_Hardness, PReLU, nn.GELU)):
            setattr(root, name, nn.ReLU())
        else:
            to_relu(child, inplace=True)
    return root


_SQRT2_F32 = float(torch.tensor(_SQRT2, dtype=torch.float32))


class _ExportLGELU(nn.Module):
    """x·0.5·(1 + erf(λ·x/√2)) in the node order lgelu writes and reads:
    Mul(x, λ'), Div(·, c), Erf, Add(·, 1), Mul(x, ·), Mul(·, 0.5). In a
    float32 file c = fl32(√2) and lgelu reads the layer's λ as λ'·√2/c
    (docs/FORMATS.md), so λ' is the float32 nearest to λ·c/√2: the λ read
    back is within one float32 ulp of λ."""

    def __init__(self, lam, dtype=torch.float32):
        super().__init__()
        if dtype == torch.float32:
            self.lam = float(torch.tensor(lam * _SQRT2_F32 / _SQRT2, dtype=torch.float32))
        else:
            self.lam = lam

    def forward(self, x):
        return (x * (torch.erf((x * self.lam) / _SQRT2) + 1.0)) * 0.5


class _ExportSwish(nn.Module):
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, x):
        return x * torch.sigmoid(x * self.beta)


def _export_copy(m, dtype):
    if isinstance(m, LambdaGELU):
        return _ExportLGELU(m.value(), dtype)
    if isinstance(m, SwishBeta):
        return _ExportSwish(m.value())
    for name, child in list(m.named_children()):
        setattr(m, name, _export_copy(child, dtype))
    return m


def export_onnx(model, path, example_input=None, opset=13):
    """Write model as ONNX that lgelu imports with each λ-GELU layer's λ
    (within one float32 ulp for float32 models, docs/FORMATS.md), Swish-β's
    β and PReLU's slope. example_input: a tensor of the input shape with
    batch 1 (e.g. torch.zeros(1, 784) or torch.zeros(1, 1, 28, 28); None
    for a model whose first layer is nn.Linear).
    Returns the list of exported parameters (λ, β or a) in layer order."""
    import onnx

    if example_input is None:  # an MLP: the first Linear's width
        first = next((c for c in model.modules() if isinstance(c, (nn.Linear, nn.Conv2d))), None)
        if not isinstance(first, nn.Linear):
            raise ValueError("export_onnx: give example_input (e.g. torch.zeros(1, 1, 28, 28)) for a model that "
                             "does not start with nn.Linear")
        example_input = torch.zeros(1, first.in_features, dtype=first.weight.dtype)
    m = _export_copy(copy.deepcopy(model), example_input.dtype).eval()
    params = [h.value() for h in hardness_modules(model)]
    with torch.no_grad():
        torch.onnx.export(m, example_input, path, opset_version=opset, input_names=["input"], output_names=["output"],
                          do_constant_folding=True)
    ts = {h.t for h in hardness_modules(model) if isinstance(h, _Hardness)}
    if len(ts) == 1:
        mp = onnx.load(path)
        e = mp.metadata_props.add()
        e.key, e.value = "lgelu.t", repr(ts.pop())
        onnx.save(mp, path)
    return params
