"""Trees the binary solvers (blossom, dl85) keep as records, flattened for the Monitor.

Both kernels store a subtree as a record row (feature, record of the x = 0 side,
record of the x = 1 side, ...) in a pool whose record 0 is the leaf.  A published
tree is the flat preorder arrays of `engine.model.tree.Tree` (original feature
indices, left = x <= 0.5), with the class weights of the training rows routed
through it, so the live view shows the same numbers as the final model.
"""

import numpy as np
from numba import njit

from engine.solvers import kernel_support as ks

LEAF = 0


@njit(cache=True, nogil=True)
def tree_buffers(cap_nodes, n_classes, max_depth):
    """The arrays `assemble_tree` fills: of, othr, ol, orr, oval, ored and its stack."""
    return (np.full(cap_nodes, -1, dtype=np.int64), np.zeros(cap_nodes),
            np.full(cap_nodes, -1, dtype=np.int64), np.full(cap_nodes, -1, dtype=np.int64),
            np.zeros((cap_nodes, n_classes)), np.full(cap_nodes, -1, dtype=np.int64),
            np.zeros((2 * max_depth + 8, 3), dtype=np.int64))


@njit(cache=True, nogil=True)
def assemble_tree(root, R, fmap, flip, Xg, Vg, of, othr, ol, orr, oval, ored, stack):
    """Flat preorder arrays of the tree of record `root` in of/othr/ol/orr, with the
    class weights Vg of the distinct rows Xg routed through it in oval (ored: the
    kernel's feature index per node).  `flip[g]` set means the kernel sees internal
    feature g negated (its sides are swapped back here).  Returns the node count."""
    m = 0
    cap = of.shape[0]
    stack[0, 0] = root
    stack[0, 1] = -1
    stack[0, 2] = 0
    top = 1
    while top > 0 and m < cap:
        top -= 1
        r = stack[top, 0]
        p = stack[top, 1]
        node = m
        m += 1
        if p >= 0:
            if stack[top, 2] == 0:
                ol[p] = node
            else:
                orr[p] = node
        ol[node] = -1
        orr[node] = -1
        if r == LEAF:
            of[node] = -1
            ored[node] = -1
            othr[node] = 0.0
        else:
            g = R[r, 0]
            of[node] = fmap[g]
            ored[node] = g
            othr[node] = 0.5
            zero_side = R[r, 1]
            one_side = R[r, 2]
            if flip[g]:
                zero_side, one_side = one_side, zero_side
            stack[top, 0] = one_side
            stack[top, 1] = node
            stack[top, 2] = 1
            stack[top + 1, 0] = zero_side
            stack[top + 1, 1] = node
            stack[top + 1, 2] = 0
            top += 2
    for node in range(m):
        for k in range(oval.shape[1]):
            oval[node, k] = 0.0
    for gi in range(Xg.shape[0]):
        node = 0
        while True:
            for k in range(oval.shape[1]):
                oval[node, k] += Vg[gi, k]
            g = ored[node]
            if g < 0:
                break
            one = (Xg[gi, g] != 0) != (flip[g] != 0)   # the original column is 1
            node = orr[node] if one else ol[node]
    return m


@njit(cache=True, nogil=True)
def publish_record_tree(rec, error, global_lb, R, fmap, flip, Xg, Vg, of, othr, ol, orr,
                        oval, ored, tstack, control, state, events, nodes, thresholds,
                        values):
    """Assemble the tree of record `rec` and write it into the sink with its error."""
    m = assemble_tree(rec, R, fmap, flip, Xg, Vg, of, othr, ol, orr, oval, ored, tstack)
    ks.publish(state, events, nodes, thresholds, values, control, error, global_lb,
               of, othr, ol, orr, oval, m)
    return m
