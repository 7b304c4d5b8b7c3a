# Continuous attack (diagnosis only): x = lo + (hi - lo)·sigmoid(w), Adam on the margin towards
# every other class, many random starts. Different basins from the signed-gradient PGD of pgd.py.
# Usage: python3 adam_attack.py STARTS STEPS I...   (files as for pgd.py)
import sys, os, numpy as np, torch
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'pgd.py')).read().split('R = int(sys.argv[1])')[0])
R = int(sys.argv[1]); S = int(sys.argv[2])
for i in sys.argv[3:]:
    lo, hi, lab = readprop('props/res_%s.vnnlib' % i); lo = torch.tensor(lo); hi = torch.tensor(hi)
    torch.manual_seed(100 + int(i)); best = 1e9
    for t in range(10):
        if t == lab: continue
        w = (torch.randn(R, 784, dtype=torch.float64) * 2).requires_grad_(True)
        opt = torch.optim.Adam([w], lr=0.1)
        for s in range(S):
            x = lo + (hi - lo) * torch.sigmoid(w); y = fwd(x)
            loss = (y[:, lab] - y[:, t]).sum(); opt.zero_grad(); loss.backward(); opt.step()
        with torch.no_grad():
            for xx in (lo + (hi - lo) * torch.sigmoid(w), torch.where(w > 0, hi, lo)):
                y = fwd(xx); other = y.clone(); other[:, lab] = -1e9
                best = min(best, float((y[:, lab] - other.max(1).values).min()))
    print(i, 'label', lab, 'best margin', best, flush=True)
