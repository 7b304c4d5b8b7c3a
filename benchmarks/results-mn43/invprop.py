# Output-constrained intermediate bounds (INVPROP-style), diagnosis only (float64, no outward
# rounding: none of these numbers is a proof). For each target class t whose CROWN bound of
# c_t.y = y_lab - y_t is negative, every ReLU layer's pre-activation bounds are recomputed over
# {x in box : c_t.y(x) <= 0} by the Lagrangian  min z_j + mu * c_t.y  (mu >= 0, one scalar per
# neuron and side, chosen on a grid then refined by golden section: the dual is concave in mu),
# back-substituted with the current bounds of every layer (the later ones from the previous pass).
# Layers are swept first to last, PASSES times. Reports, per pass, the CROWN bound of c_t.y with
# the tightened bounds, the unstable count and the time.
# ALPHA=1: also the output bound by alpha-CROWN on the output row (slopes by Adam, 40 steps).
# ALPHAI=S: the starting intermediate bounds by alpha-CROWN (S Adam steps per layer) instead of CROWN,
# and the constrained bounds by alpha and mu jointly (S Adam steps from the grid's best mu).
# CHECK=D (check mode): the region c.y <= m + D instead, m the minimum of c.y over an attack's points;
# every attack point in that region must lie within the tightened bounds (a check of this script).
# FAR=D: skip the targets whose CROWN bound is below -D.
# Usage: [ALPHA=1] [ALPHAI=S] [FAR=D] python3 invprop.py PASSES I...   (in a directory with relu.onnx and props/res_I.vnnlib)
import sys, os, time, torch
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'results-cuts43c', 'crown_inner.py')
_me = __file__; __file__ = src
exec(open(src).read().split("for i in sys.argv[1:]:")[0])
__file__ = _me
relus = [n for n in nodes if n.op_type == 'Relu']
NODE_OF = {n.output[0]: n for n in nodes}

def backsub(lo, hi, L, U, seeds, alpha=None):
    # seeds: {tensor name: [m, width] coefficient rows}; returns lower bounds of sum_seeds row.value
    lam = {k: v.clone() for k, v in seeds.items()}
    m = next(iter(seeds.values())).shape[0]
    const = torch.zeros(m, dtype=torch.float64)
    for nd in reversed(nodes):
        o = nd.output[0]
        if o not in lam: continue
        Lo = lam.pop(o)
        def add(name, M):
            lam[name] = lam[name] + M if name in lam else M
        if nd.op_type == 'Gemm':
            W = WT[nd.input[1]]; b = BT[nd.input[2]]
            const += Lo @ b; add(nd.input[0], Lo @ W.T)
        elif nd.op_type == 'Gather':
            ix = IT[nd.input[1]]
            M = torch.zeros(Lo.shape[0], 256, dtype=torch.float64); M.index_add_(1, ix, Lo); add(nd.input[0], M)
        elif nd.op_type == 'Add':
            add(nd.input[0], Lo); add(nd.input[1], Lo.clone())
        elif nd.op_type == 'Relu':
            k = relus.index(nd)
            if k >= len(L): raise Exception('layer without bounds')
            l = L[k]; u = U[k]
            act = l >= 0; ina = u <= 0; uns = ~act & ~ina
            su = torch.where(uns, u / (u - l).clamp(min=1e-12), act.double())
            bu = torch.where(uns, -l * su, torch.zeros_like(l))
            sl = torch.where(uns, (u >= -l).double() if alpha is None else alpha[k].clamp(0, 1), act.double())
            pos = Lo.clamp(min=0); neg = Lo.clamp(max=0)
            const = const + neg @ bu
            add(nd.input[0], pos * sl + neg * su)
    Li = lam['input']
    return const + (Li.clamp(min=0) @ lo) + (Li.clamp(max=0) @ hi)

def alpha_bound(lo, hi, L, U, seeds, steps=40):
    # alpha-CROWN on the output row only (the intermediate bounds fixed): lower slopes optimised by Adam
    al = [((u >= -l).double()).clone().requires_grad_(True) for l, u in zip(L, U)]
    opt = torch.optim.Adam(al, lr=0.1); best = -1e30
    for s in range(steps):
        with torch.enable_grad():
            v = backsub(lo, hi, L, U, seeds, al)[0]
            best = max(best, float(v))
            opt.zero_grad(); (-v).backward(); opt.step()
        with torch.no_grad():
            for a in al: a.clamp_(0, 1)
    return best

def crown_layers(lo, hi):
    L, U = [], []
    eye = torch.eye(256, dtype=torch.float64)
    big = [torch.full((256,), -1e30, dtype=torch.float64)] * len(relus)
    for k, nd in enumerate(relus):
        Lk = L + big[k:]; Uk = U + [-b for b in big[k:]]
        r = backsub(lo, hi, Lk, Uk, {nd.input[0]: torch.cat([eye, -eye])})
        L.append(r[:256]); U.append(-r[256:])
    return L, U

def crown_layers_alpha(lo, hi, steps):
    # alpha-CROWN intermediate bounds: per layer, the 512 rows (lower, -upper) each with their own
    # lower slopes of every earlier layer, Adam on the sum of the rows' bounds
    L, U = [], []
    eye = torch.eye(256, dtype=torch.float64)
    for k, nd in enumerate(relus):
        seeds = {nd.input[0]: torch.cat([eye, -eye])}
        best = backsub(lo, hi, L, U, seeds)
        if k > 0 and steps > 0:
            al = [((u >= -l).double())[None, :].repeat(512, 1).requires_grad_(True) for l, u in zip(L, U)]
            opt = torch.optim.Adam(al, lr=0.1)
            for s in range(steps):
                with torch.enable_grad():
                    v = backsub(lo, hi, L, U, seeds, al + [None] * 0)
                    best = torch.max(best, v.detach())
                    opt.zero_grad(); (-v.sum()).backward(); opt.step()
                with torch.no_grad():
                    for a in al: a.clamp_(0, 1)
        L.append(best[:256]); U.append(-best[256:])
    return L, U

def unstable(L, U):
    return sum(int(((l < 0) & (u > 0)).sum()) for l, u in zip(L, U))

GRID = [0.0] + [2.0 ** e for e in range(-6, 7)]
def tighten_layer(lo, hi, L, U, k, c, out):
    # bounds of layer k's pre-activations over {c.y <= 0}: max over mu >= 0 of
    # min z_j + mu c.y  (lower) and min -z_j + mu c.y (upper)
    nd = relus[k]; eye = torch.eye(256, dtype=torch.float64)
    E = torch.cat([eye, -eye]); m = 512
    def val(mu):
        return backsub(lo, hi, L, U, {nd.input[0]: E, out: mu[:, None] * c[None, :]}) - mu * TAU
    best = torch.full((m,), -1e30, dtype=torch.float64); bmu = torch.zeros(m, dtype=torch.float64)
    for g in GRID:
        mu = torch.full((m,), g, dtype=torch.float64); v = val(mu)
        better = v > best; best = torch.where(better, v, best); bmu = torch.where(better, mu, bmu)
    # golden section on [bmu/2, 2 bmu] per row (concave)
    a = torch.where(bmu > 0, bmu / 2, torch.zeros_like(bmu)); b = torch.where(bmu > 0, bmu * 2, torch.full_like(bmu, 2.0 ** -6))
    gr = (5 ** 0.5 - 1) / 2
    for it in range(8):
        c1 = b - gr * (b - a); c2 = a + gr * (b - a)
        v1 = val(c1); v2 = val(c2)
        for mu, v in ((c1, v1), (c2, v2)):
            better = v > best; best = torch.where(better, v, best)
        left = v1 > v2
        b = torch.where(left, c2, b); a = torch.where(left, a, c1)
    if ALPHAI > 0:
        # joint alpha (per row, every layer's lower slopes) and mu (from the best found) by Adam
        al = [((u >= -l).double())[None, :].repeat(m, 1).requires_grad_(True) for l, u in zip(L, U)]
        mu = bmu.clone().requires_grad_(True)
        opt = torch.optim.Adam(al + [mu], lr=0.1)
        for s in range(ALPHAI):
            with torch.enable_grad():
                v = backsub(lo, hi, L, U, {nd.input[0]: E, out: mu[:, None] * c[None, :]}, al) - mu * TAU
                best = torch.max(best, v.detach())
                opt.zero_grad(); (-v.sum()).backward(); opt.step()
            with torch.no_grad():
                for a in al: a.clamp_(0, 1)
                mu.clamp_(min=0)
    nl = torch.max(L[k], best[:256]); nu = torch.min(U[k], -best[256:])
    return nl, nu

PASSES = int(sys.argv[1]); ALPHA = os.environ.get('ALPHA', '0') == '1'
ALPHAI = int(os.environ.get('ALPHAI', '0'))  # >0: intermediate bounds by alpha-CROWN, that many Adam steps
TAU = 0.0  # the region is c.y <= TAU (0: the property's violation)
CHECK = float(os.environ.get('CHECK', '0'))  # > 0: TAU = the attack's minimum of c.y + CHECK
def attack_points(lo, hi, c):
    # the points of 256 signed-gradient descents of c.y (100 steps), every 10th step kept
    x = lo + (hi - lo) * torch.rand(256, 784, dtype=torch.float64); keep = []
    for st in range(100):
        x.requires_grad_(True)
        with torch.enable_grad():
            g, = torch.autograd.grad((fwd(x) @ c).sum(), x)
        x = torch.max(torch.min(x.detach() - (hi - lo) * (0.3 * (1 - st / 100) + 0.02) * g.sign(), hi), lo)
        if st % 10 == 9: keep.append(x.clone())
    return torch.cat(keep)
FAR = float(os.environ.get('FAR', '1e30'))  # skip targets whose CROWN bound is below -FAR
torch.set_num_threads(1)
for i in sys.argv[2:]:
    lo, hi, lab = readprop('props/res_%s.vnnlib' % i); lo = torch.tensor(lo); hi = torch.tensor(hi)
    out = nodes[-1].output[0]
    with torch.no_grad():
        t0 = time.time()
        L0, U0 = crown_layers(lo, hi) if ALPHAI == 0 else crown_layers_alpha(lo, hi, ALPHAI)
        C = torch.zeros(10, 10, dtype=torch.float64)
        for t in range(10):
            if t != lab: C[t, lab] = 1; C[t, t] = -1
        base = backsub(lo, hi, L0, U0, {out: C})
        print('image', i, 'label', lab, 'CROWN: unstable %d, bounds %s, %.1f s' % (
            unstable(L0, U0), ' '.join('%d:%.3f' % (t, float(base[t])) for t in range(10) if t != lab), time.time() - t0), flush=True)
        if ALPHA:
            print('  output alpha on CROWN bounds: %s' % ' '.join('%d:%.3f' % (t, alpha_bound(lo, hi, L0, U0, {out: C[t:t+1]}))
                                                            for t in range(10) if t != lab), flush=True)
        for t in range(10):
            if t == lab or (not CHECK and (float(base[t]) >= 0 or float(base[t]) < -FAR)): continue
            L = [l.clone() for l in L0]; U = [u.clone() for u in U0]; t1 = time.time()
            if CHECK:
                xa = attack_points(lo, hi, C[t])
                TAU = float((fwd(xa) @ C[t]).min()) + CHECK
                print('    check: region c.y <= %.3f (attack minimum + %g)' % (TAU, CHECK), flush=True)
            prev = None
            for p in range(PASSES):
                for k in range(len(relus)):
                    L[k], U[k] = tighten_layer(lo, hi, L, U, k, C[t], out)
                    if bool((L[k] > U[k]).any()): break
                empty = any(bool((l > u).any()) for l, u in zip(L, U))
                b = float(backsub(lo, hi, L, U, {out: C[t:t+1]})[0])
                ab = alpha_bound(lo, hi, L, U, {out: C[t:t+1]}) if ALPHA and not empty else float('nan')
                print('  target %d pass %d: bound %.3f%s (output alpha %.3f), unstable %d, %.1f s' % (
                    t, p + 1, b, ' (region empty)' if empty else '', ab, unstable(L, U), time.time() - t1), flush=True)
                if CHECK:
                    inr = (fwd(xa) @ C[t]) <= TAU
                    zs = pre_acts(xa[inr])
                    viol = max(max(float((L[k] - z.min(0).values).max()), float((z.max(0).values - U[k]).max()), 0.0)
                               for k, z in enumerate(zs)) if bool(inr.any()) else float('nan')
                    moved = sum(int((l > l0 + 1e-9).sum() + (u < u0 - 1e-9).sum()) for l, u, l0, u0 in zip(L, U, L0, U0))
                    gain = sum(float((l - l0).sum() + (u0 - u).sum()) for l, u, l0, u0 in zip(L, U, L0, U0))
                    print('    check: %d attack points in the region, worst bound violation %.3g; %d bounds tightened (by %.3g in all)'
                          % (int(inr.sum()), viol, moved, gain), flush=True)
                if empty or (b > 0 and not CHECK) or b == prev: break
                prev = b
