"""The transport-log generator of benchmarks/real_tables.py makes the table it promises."""

import pandas as pd
from big_tables import real_tables as load_real_tables

real_tables = load_real_tables()


def test_table_shape_missing_cells_and_classes(tmp_path):
    path = real_tables.make_table(2_000, 7, tmp_path / "a.csv")
    frame = pd.read_csv(path)
    assert frame.shape == (2_000, 16)
    assert frame.columns[-1] == "delayed"
    distinct = frame.nunique()
    assert distinct["carrier"] == 3 and distinct["region"] == 16
    assert distinct["route"] >= 90
    assert 400 <= distinct["shipper"] <= 2_000          # Zipf: many of the 4,000 are rare
    assert distinct["n_stops"] == 10 and distinct["load_pct"] >= 95
    assert distinct["weight_t"] >= 600 and distinct["distance_km"] >= 600
    assert frame["shipper"].dropna().str.fullmatch(r"shipper_\d+").all()
    missing = frame.drop(columns="delayed").isna().mean()
    assert ((missing >= 0.01) & (missing <= 0.03)).all(), missing
    assert frame["delayed"].notna().all()
    shares = frame["delayed"].value_counts(normalize=True)
    assert set(shares.index) == {"yes", "no"} and shares.min() > 0.15


def test_same_seed_same_bytes(tmp_path):
    a = real_tables.make_table(2_000, 7, tmp_path / "a.csv").read_bytes()
    b = real_tables.make_table(2_000, 7, tmp_path / "b.csv").read_bytes()
    c = real_tables.make_table(2_000, 8, tmp_path / "c.csv").read_bytes()
    assert a == b and a != c


def test_chunks_join_into_one_table(tmp_path, monkeypatch):
    monkeypatch.setattr(real_tables, "CHUNK_ROWS", 700)       # 2,000 rows = 3 chunks
    frame = pd.read_csv(real_tables.make_table(2_000, 7, tmp_path / "a.csv"))
    assert frame.shape == (2_000, 16)
    assert not (frame["carrier"] == "carrier").any()           # one header only
    assert not list(tmp_path.glob("*.partial"))
