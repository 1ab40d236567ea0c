"""Primal gap integral (Berthold 2013, as in the CA-DL8.5 paper)."""

import pytest

from engine.metrics import primal_gap, primal_integral


def test_primal_gap():
    assert primal_gap(10, 10) == 0
    assert primal_gap(20, 10) == pytest.approx(0.5)
    assert primal_gap(0, 0) == 0


def test_primal_integral_step_function():
    # p = 1 on [0, 2), 0.5 on [2, 5), 0 after: 2 + 1.5 = 3.5
    assert primal_integral([(2, 20), (5, 10)], best=10, horizon=10) == pytest.approx(3.5)
    # finding the same trees earlier lowers the integral
    assert primal_integral([(1, 20), (4, 10)], best=10, horizon=10) == pytest.approx(2.5)
    # no incumbent at all: p = 1 throughout
    assert primal_integral([], best=10, horizon=7) == pytest.approx(7)
    # incumbents after the horizon do not count
    assert primal_integral([(3, 20), (12, 10)], best=10, horizon=10) == pytest.approx(6.5)
