"""Library items copied into a scene folder: an asset copy cut short (a killed run) is not taken for
the asset by the next run."""

from __future__ import annotations

import shutil

import pytest

from urbanverse.assets.catalogue import catalogue_entries, materialize, record_of
from urbanverse.assets.record import load_asset
from urbanverse.render.thumbnail import library_thumbnail
from urbanverse.scene import library_refs
from urbanverse.scene.library_refs import install_asset


def test_an_asset_copy_cut_short_is_redone_whole(tmp_path, monkeypatch):
    asset = record_of(catalogue_entries(1)[0])
    source = materialize(asset, thumbnail=library_thumbnail)
    real_copytree = shutil.copytree

    def killed(src, dst, **kwargs):  # copies one file, then the process "dies"
        dst.mkdir(parents=True, exist_ok=True)
        first = next(p for p in sorted(src.iterdir()) if p.is_file())
        shutil.copyfile(first, dst / first.name)
        raise KeyboardInterrupt

    monkeypatch.setattr(library_refs.shutil, "copytree", killed)
    with pytest.raises(KeyboardInterrupt):
        install_asset(asset, tmp_path, thumbnail=library_thumbnail)
    assert not (tmp_path / "assets" / asset.uid).exists()

    monkeypatch.setattr(library_refs.shutil, "copytree", real_copytree)
    ref = install_asset(asset, tmp_path, thumbnail=library_thumbnail)
    folder = tmp_path / ref.path
    assert load_asset(folder) == load_asset(source)
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in source.iterdir())
    assert [p.name for p in (tmp_path / "assets").iterdir()] == [asset.uid]  # no partial copy left
