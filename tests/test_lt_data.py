"""The CIFAR JPEG pack loader on tiny packs built here: labels, pixels, a cache keyed on content, clear errors."""
import io
import zipfile

import numpy as np
import pytest
from PIL import Image

from imbalanced_cl.lt import datasets as D
from imbalanced_cl.lt import jpeg_pack as JP

CLASSES = np.array(["red", "green", "blue"])


def _colour(c: int, i: int) -> tuple:
    """A distinct flat colour per (class, image): JPEG keeps flat images almost exactly."""
    return (40 + 80 * (c == 0) + 10 * i, 40 + 80 * (c == 1) + 10 * i, 40 + 80 * (c == 2) + 10 * i)


def _jpeg(colour) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (32, 32), colour).save(buf, format="JPEG", quality=95)
    return buf.getvalue()


def _split(per_class: int, shift: int = 0):
    blobs, labels, colours = [], [], []
    for c in range(len(CLASSES)):
        for i in range(per_class):
            col = tuple(v + shift for v in _colour(c, i))
            blobs.append(_jpeg(col))
            labels.append(c)
            colours.append(col)
    offsets = np.concatenate([[0], np.cumsum([len(b) for b in blobs])]).astype(np.int64)
    blob = np.frombuffer(b"".join(blobs), dtype=np.uint8)
    return blob, offsets, np.array(labels, dtype=np.uint8), np.array(colours, dtype=float)


def make_pack(path, shift: int = 0, **override):
    """Write a pack in the layout of shared/data/cifar10-jpeg.npz (4 train, 2 test images per class)."""
    trj, tro, trl, trc = _split(4, shift)
    tej, teo, tel, tec = _split(2, shift)
    arrays = dict(train_jpeg=trj, train_offsets=tro, train_labels=trl, test_jpeg=tej, test_offsets=teo,
                  test_labels=tel, classes=CLASSES)
    arrays.update(override)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **arrays)
    return trc, tec


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    data, cache = tmp_path / "data", tmp_path / "cache"
    monkeypatch.setenv("IMBALANCED_CL_CACHE", str(cache))
    monkeypatch.setattr(JP, "shared_jpeg_pack", lambda: tmp_path / "no-shared" / "cifar10-jpeg.npz")
    return data, cache


def test_tiny_pack_loads_with_labels_and_pixels(dirs):
    data, cache = dirs
    trc, tec = make_pack(data / "cifar10-jpeg.npz")
    d = D.load("cifar10", data_dir=data, cifar10_source="jpeg")
    assert d.classes == list(CLASSES) and d.num_classes == 3
    assert d.train.labels.tolist() == [0] * 4 + [1] * 4 + [2] * 4 and d.test.labels.tolist() == [0, 0, 1, 1, 2, 2]
    assert d.train.images.shape == (12, 3, 32, 32) and d.train.images.dtype.is_floating_point is False
    for split, colours in ((d.train, trc), (d.test, tec)):
        x = split.images.numpy().astype(float)
        np.testing.assert_allclose(x.mean(axis=(2, 3)), colours, atol=2.0)   # per image, per channel (CHW order)
        assert x.std(axis=(2, 3)).max() < 2.0                                  # flat images stay flat
    assert "JPEG" in d.source and str(data / "cifar10-jpeg.npz") in d.source
    digest = D.file_digest(data / "cifar10-jpeg.npz")
    assert [p.name for p in cache.iterdir()] == [f"cifar10-jpeg-decoded-{digest[:16]}.npz"]


def test_cache_is_reused_and_keyed_on_the_pack(dirs, monkeypatch):
    data, cache = dirs
    pack = data / "cifar10-jpeg.npz"
    make_pack(pack)
    first = D.load("cifar10", data_dir=data, cifar10_source="jpeg")

    def no_decode(*a, **k):
        raise AssertionError("decoded again although the cache matches the pack")
    monkeypatch.setattr(JP, "_decode_jpegs", no_decode)
    again = D.load("cifar10", data_dir=data, cifar10_source="jpeg")
    assert np.array_equal(again.train.images.numpy(), first.train.images.numpy())
    monkeypatch.undo()
    monkeypatch.setenv("IMBALANCED_CL_CACHE", str(cache))
    monkeypatch.setattr(JP, "shared_jpeg_pack", lambda: data.parent / "no-shared" / "cifar10-jpeg.npz")
    make_pack(pack, shift=30)                      # same size and layout, other pixels: must not reuse the cache
    new = D.load("cifar10", data_dir=data, cifar10_source="jpeg")
    diff = new.train.images.numpy().astype(float).mean() - first.train.images.numpy().astype(float).mean()
    assert diff == pytest.approx(30, abs=2)
    assert len(list(cache.iterdir())) == 2


def test_damaged_cache_is_rebuilt(dirs):
    data, cache = dirs
    make_pack(data / "cifar10-jpeg.npz")
    D.load("cifar10", data_dir=data, cifar10_source="jpeg")
    (f,) = cache.iterdir()
    f.write_bytes(f.read_bytes()[:100])
    with pytest.warns(UserWarning, match="unreadable"):
        d = D.load("cifar10", data_dir=data, cifar10_source="jpeg")
    assert len(d.train) == 12


def test_missing_pack_names_path_and_remedy(dirs):
    data, _ = dirs
    with pytest.raises(D.DatasetMissing) as e:
        D.load("cifar10", data_dir=data, cifar10_source="jpeg")
    msg = str(e.value)
    assert "no-shared/cifar10-jpeg.npz" in msg and "does not exist" in msg
    assert "shared/data" in msg and "cifar10_source='original'" in msg


@pytest.mark.parametrize("keep", [0.5, 0.999])
def test_truncated_pack_says_so(dirs, keep):
    data, _ = dirs
    pack = data / "cifar10-jpeg.npz"
    make_pack(pack)
    raw = pack.read_bytes()
    pack.write_bytes(raw[:int(keep * len(raw))])
    with pytest.raises(D.DatasetCorrupt) as e:
        D.load("cifar10", data_dir=data, cifar10_source="jpeg")
    assert not isinstance(e.value, zipfile.BadZipFile)
    msg = str(e.value)
    assert str(pack) in msg and "truncated" in msg and "copy cifar10-jpeg.npz again" in msg


def test_flipped_bytes_fail_the_checksum(dirs):
    data, _ = dirs
    pack = data / "cifar10-jpeg.npz"
    make_pack(pack)
    raw = bytearray(pack.read_bytes())
    raw[200:210] = bytes(10)                       # inside train_jpeg.npy, the first member (stored, CRC-checked)
    pack.write_bytes(bytes(raw))
    with pytest.raises(D.DatasetCorrupt, match="corrupt.*checksum"):
        D.load("cifar10", data_dir=data, cifar10_source="jpeg")


@pytest.mark.parametrize("name, bad, words", [
    ("train_labels", np.zeros((12, 1), np.uint8), ["train_labels", "1-D", "(12, 1)"]),
    ("train_offsets", np.arange(5, dtype=np.int64), ["train_offsets", "(13,)", "(5,)"]),
    ("test_labels", np.full(6, 7, np.uint8), ["test_labels", "0..2", "7..7"]),
    ("classes", np.zeros((3, 2)), ["classes", "class names", "(3, 2)"]),
])
def test_wrong_arrays_are_named(dirs, name, bad, words):
    data, _ = dirs
    pack = data / "cifar10-jpeg.npz"
    make_pack(pack, **{name: bad})
    with pytest.raises(D.DatasetCorrupt) as e:
        D.load("cifar10", data_dir=data, cifar10_source="jpeg")
    for w in words + [str(pack)]:
        assert w in str(e.value)


def test_undecodable_image_is_named(dirs):
    data, _ = dirs
    pack = data / "cifar10-jpeg.npz"
    trj, tro, _, _ = _split(4)
    trj = trj.copy()
    trj[tro[5]:tro[6]] = 7                         # image 5 of the train split becomes garbage of the same length
    make_pack(pack, train_jpeg=trj)
    with pytest.raises(D.DatasetCorrupt, match=r"train split's image 5 is not a decodable JPEG"):
        D.load("cifar10", data_dir=data, cifar10_source="jpeg")


def test_missing_array_is_named(dirs):
    data, _ = dirs
    pack = data / "cifar10-jpeg.npz"
    make_pack(pack)
    with np.load(pack) as z:
        arrays = {k: z[k] for k in z.files if k != "test_offsets"}
    np.savez(pack, **arrays)
    with pytest.raises(D.DatasetCorrupt, match="lacks the array.*test_offsets"):
        D.load("cifar10", data_dir=data, cifar10_source="jpeg")
