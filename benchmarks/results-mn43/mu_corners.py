# The first layer's minimising corners and the constrained bounds at two thresholds (VERIFY.md
# "Output-constrained intermediate bounds: measured", the check). Usage: python3 mu_corners.py  (in DIR, props/res_12e002.vnnlib)
import sys, os, torch
sys.argv = ['x', '1']
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'invprop.py')
code = open(src).read().split("PASSES = int(sys.argv[1])")[0]
__file__ = src
exec(code)
TAU = 0.0; ALPHAI = 0
lo, hi, lab = readprop('props/res_12e002.vnnlib'); lo = torch.tensor(lo); hi = torch.tensor(hi)
out = nodes[-1].output[0]
with torch.no_grad():
    L0, U0 = crown_layers(lo, hi)
    c = torch.zeros(10, dtype=torch.float64); c[lab] = 1; c[0] = -1
    W = WT[nodes[0].input[1]]; b = BT[nodes[0].input[2]]
    # layer-0 minimiser corners of z_j
    X = torch.where(W.T > 0, lo[None, :], hi[None, :])  # [256, 784]
    cy = fwd(X) @ c
    print('c.y at the z_j minimisers: min %.3f median %.3f max %.3f' % (cy.min(), cy.median(), cy.max()))
    for tau in (8.5, 8.9):
        TAU = tau
        nl, nu = tighten_layer(lo, hi, L0, U0, 0, c, out)
        print('tau', tau, 'lower tightened', int((nl > L0[0] + 1e-9).sum()), 'upper', int((nu < U0[0] - 1e-9).sum()))
