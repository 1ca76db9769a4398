"""Scenarios and datasets: fields, the release's order, errors that name file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

import faultbench as fb
from conftest import MOCK, REPO


def test_scenario_fields(duo_scenario):
    s = duo_scenario
    assert (s.id, s.topology, s.category, s.layer) == (
        "duo-r1-ospfd-down",
        "Duo",
        "correct_fault",
        "base",
    )
    assert "pc1" in s.ticket
    assert s.fix is not None and s.ground_truth
    kinds = {a["kind"] for a in s.axes}
    assert "assert" in kinds
    assert {"axis": "assert-identifies: r1", "kind": "assert", "argument": "r1"} in s.axes
    assert s.path == MOCK / "duo-r1-ospfd-down.txt"
    # The text round-trips through the release's format.
    again = fb.Scenario.parse(s.to_text())
    assert (again.id, again.ticket, again.axes) == (s.id, s.ticket, s.axes)


def test_project_dataset_core_scope():
    ds = fb.load_dataset(REPO / "dataset")
    assert ds.errors == []
    core = ds.select("all", topology="Kath2")
    assert len(core) == 25
    cats = [s.category for s in core]
    assert cats.count("correct_fault") == 10 and cats.count("false_premise") == 9
    # base first, then cex (the release's order)
    layers = [s.layer for s in core]
    assert layers == sorted(layers, key=lambda l: l != "base")
    assert all(s.topology == "Kath2" for s in core)
    assert len(list(ds)) == len(ds) >= 200


def test_bad_file_error_names_file_and_line(tmp_path: Path):
    text = (MOCK / "duo-r1-ospfd-down.txt").read_text()
    bad = tmp_path / "kath2_Q" / "base" / "broken.txt"
    bad.parent.mkdir(parents=True)
    # An unknown section header on a known line.
    lines = text.splitlines()
    lines.insert(3, "[NOT-A-SECTION]")
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(fb.ScenarioError) as e:
        fb.load_scenario(bad)
    assert "broken.txt" in str(e.value)
    assert ":4" in str(e.value) or "line 4" in str(e.value), str(e.value)

    ds = fb.load_dataset(tmp_path)
    assert len(ds) == 0 and len(ds.errors) == 1 and "broken.txt" in ds.errors[0]
    with pytest.raises(fb.ScenarioError, match="broken.txt"):
        fb.validate(tmp_path)


def test_unknown_scope_is_a_config_error():
    with pytest.raises(fb.ConfigError, match="scope"):
        fb.load_dataset(REPO / "dataset").select("everything")
