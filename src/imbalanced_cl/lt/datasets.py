"""Image datasets for notebook 06: CIFAR-10 (offline JPEG pack or original release), CIFAR-100, ImageNet-LT, digits.

Every loader returns a `Split` pair (train, test) of uint8 images (N, C, H, W) with integer labels; ImageNet-LT
returns lazily decoded file lists instead. `long_tailed_counts` / `long_tailed_indices` build the exponential
profile of SDCLR (Jiang et al., 2021) and Cao et al. (2019): n_c = floor(n_max * rho^(-c/(C-1))).

Data cannot silently go wrong: a missing file raises DatasetMissing and a damaged one DatasetCorrupt, each naming
the path, what is wrong and how to get a good copy. The decoded JPEG pack is cached under a name keyed on the
pack's sha256, in $IMBALANCED_CL_CACHE (default: the data folder, $IMBALANCED_CL_DATA or ~/.cache/imbalanced_cl/data).
"""
from __future__ import annotations

import math
import os
import pickle
import tarfile
import urllib.request
from pathlib import Path

import numpy as np
import torch

from .images import DatasetMissing, ImageData, Split, default_data_dir  # re-exported
# The JPEG pack's loader and checks live in jpeg_pack.py; their names are also reachable from here.
from .jpeg_pack import (PACK_BYTES, PACK_KEYS, PACK_SHA256, DatasetCorrupt, default_cache_dir,  # noqa: F401
                        file_digest, jpeg_pack, load_cifar10_jpeg, pack_help, read_jpeg_pack, shared_jpeg_pack)

DATASETS = ("cifar10", "cifar100", "imagenet-lt", "digits")
CIFAR_URLS = {"cifar10": "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz",
              "cifar100": "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"}
CIFAR_DIRS = {"cifar10": "cifar-10-batches-py", "cifar100": "cifar-100-python"}
IMAGENET_LT_LISTS = ("ImageNet_LT_train.txt", "ImageNet_LT_test.txt")
IMAGENET_LT_HELP = ("ImageNet-LT needs the ILSVRC-2012 images (train/ and val/ folders, from image-net.org) and the "
                    "split lists ImageNet_LT_train.txt / ImageNet_LT_test.txt of Liu et al. (2019), "
                    "https://github.com/zhmiao/OpenLongTailRecognition-OLTR (put the lists in the root or pass "
                    "imagenet_lists).")


# ----------------------------------------------------------------------------------------------- CIFAR
def _download(url: str, dest: Path, what: str) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".part")
    try:
        with urllib.request.urlopen(url, timeout=60) as r, open(tmp, "wb") as fh:
            while chunk := r.read(1 << 20):
                fh.write(chunk)
    except Exception as e:
        tmp.unlink(missing_ok=True)
        raise DatasetMissing(f"{what} is not in {dest.parent} and downloading {url} failed ({type(e).__name__}: "
                             f"{e}). Download it by hand and unpack it there (tar xzf), or set "
                             f"data_dir / $IMBALANCED_CL_DATA to a folder that has it.") from e
    os.replace(tmp, dest)


def load_cifar_original(name: str, data_dir: Path, download: bool = True) -> ImageData:
    """The original CIFAR-10/100 python release from data_dir, downloaded there with urllib if absent."""
    folder = data_dir / CIFAR_DIRS[name]
    if not folder.exists():
        url = CIFAR_URLS[name]
        archive = data_dir / Path(url).name
        if not archive.exists():
            if not download:
                raise DatasetMissing(
                    f"{name}: looked for {folder} (the unpacked python release) and {archive}; neither exists and "
                    f"download is off. Get it with: mkdir -p {data_dir} && curl -L {url} | tar xz -C {data_dir}")
            _download(url, archive, name)
        with tarfile.open(archive) as tf:
            tf.extractall(data_dir, filter="data")

    def unpickle(f):
        with open(folder / f, "rb") as fh:
            return pickle.load(fh, encoding="bytes")

    if name == "cifar10":
        parts = [unpickle(f"data_batch_{i}") for i in range(1, 6)]
        xtr = np.concatenate([p[b"data"] for p in parts])
        ytr = np.concatenate([p[b"labels"] for p in parts])
        te = unpickle("test_batch")
        xte, yte = te[b"data"], np.asarray(te[b"labels"])
        classes = [c.decode() for c in unpickle("batches.meta")[b"label_names"]]
        mean, std = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)
    else:
        tr, te = unpickle("train"), unpickle("test")
        xtr, ytr = tr[b"data"], np.asarray(tr[b"fine_labels"])
        xte, yte = te[b"data"], np.asarray(te[b"fine_labels"])
        classes = [c.decode() for c in unpickle("meta")[b"fine_label_names"]]
        mean, std = (0.5071, 0.4865, 0.4409), (0.2673, 0.2564, 0.2762)
    def reshape(x):
        return np.ascontiguousarray(x.reshape(-1, 3, 32, 32).astype(np.uint8))
    def mk(x, y):
        return Split(np.asarray(y, dtype=np.int64), torch.from_numpy(reshape(x)), None, 32, 3)
    return ImageData(name, mk(xtr, ytr), mk(xte, yte), classes, f"original {name} release ({folder})", mean, std)


# ----------------------------------------------------------------------------------------------- digits
def load_digits_data(test_fraction: float = 0.3) -> ImageData:
    """scikit-learn's bundled 8x8 digits (1,797 images) as one-channel uint8, split per class with a fixed seed."""
    from sklearn.datasets import load_digits
    d = load_digits()
    x = np.clip(d.images * (255.0 / 16.0), 0, 255).astype(np.uint8)[:, None]   # (N, 1, 8, 8)
    y = d.target.astype(np.int64)
    rng = np.random.default_rng(12345)    # the train/test split is fixed; run seeds only pick LT subsets
    te = np.zeros(len(y), bool)
    for c in range(10):
        idx = rng.permutation(np.flatnonzero(y == c))
        te[idx[:int(round(test_fraction * len(idx)))]] = True
    def mk(m):
        return Split(y[m], torch.from_numpy(np.ascontiguousarray(x[m])), None, 8, 1)
    return ImageData("digits", mk(~te), mk(te), [str(i) for i in range(10)],
                     "scikit-learn load_digits (8x8, 16 grey levels)", (0.3,), (0.4,))


# ----------------------------------------------------------------------------------------------- ImageNet-LT
def load_imagenet_lt(root: str | Path, lists: str | Path = "", image_size: int = 224) -> ImageData:
    """ImageNet-LT (Liu et al., 2019): the ILSVRC-2012 images under `root` and the standard split lists."""
    root = Path(root).expanduser() if root else None
    lists_dir = Path(lists).expanduser() if lists else root
    if root is None or not root.exists():
        raise DatasetMissing(f"imagenet-lt: the ImageNet root {str(root) if root else '(imagenet_root not set)'} "
                             f"does not exist. {IMAGENET_LT_HELP}")
    found = [lists_dir / f for f in IMAGENET_LT_LISTS]
    missing = [str(p) for p in found if not p.exists()]
    if missing:
        raise DatasetMissing(f"imagenet-lt: split list(s) not found: {missing}. {IMAGENET_LT_HELP}")

    def read(p: Path):
        files, labels = [], []
        for line in p.read_text().split("\n"):
            if line.strip():
                rel, lab = line.split()
                files.append(str(root / rel))
                labels.append(int(lab))
        return files, np.asarray(labels, dtype=np.int64)

    ftr, ytr = read(found[0])
    fte, yte = read(found[1])
    classes = sorted({Path(f).parent.name for f in ftr})
    return ImageData("imagenet-lt", Split(ytr, None, ftr, image_size, 3), Split(yte, None, fte, image_size, 3),
                     [str(i) for i in range(int(ytr.max()) + 1)] if len(classes) != ytr.max() + 1 else classes,
                     f"ImageNet-LT split lists in {lists_dir}, images in {root}",
                     (0.485, 0.456, 0.406), (0.229, 0.224, 0.225))


def imagenet_balanced_probe(data: ImageData, per_class: int, seed: int) -> Split:
    """A class-balanced probe-train set for ImageNet-LT: `per_class` images of each class from its train folder."""
    rng = np.random.default_rng(seed)
    by_class: dict[int, str] = {}
    for f, y in zip(data.train.files, data.train.labels, strict=True):
        by_class.setdefault(int(y), str(Path(f).parent))
    files, labels = [], []
    for y in sorted(by_class):
        pool = sorted(str(p) for p in Path(by_class[y]).iterdir())
        take = rng.choice(len(pool), size=min(per_class, len(pool)), replace=False)
        files += [pool[i] for i in sorted(take)]
        labels += [y] * len(take)
    return Split(np.asarray(labels, dtype=np.int64), None, files, data.train.image_size, 3)


# ----------------------------------------------------------------------------------------------- entry point
# 8 arguments: one entry point for every dataset, each argument says where one of them lives or how to fetch it
def load(name: str, data_dir: str | Path = "", download: bool = True, cifar10_source: str = "auto",
         imagenet_root: str = "", imagenet_lists: str = "", image_size: int = 224,
         cache_dir: str | Path = "") -> ImageData:
    """Load a dataset by name; DatasetMissing (where it looked, how to get it) or DatasetCorrupt (what is wrong)."""
    if name not in DATASETS:
        raise ValueError(f"dataset must be one of {DATASETS}, got {name!r}")
    data_dir = Path(data_dir).expanduser() if data_dir else default_data_dir()
    cache_dir = Path(cache_dir).expanduser() if cache_dir else None
    if name == "digits":
        return load_digits_data()
    if name == "imagenet-lt":
        return load_imagenet_lt(imagenet_root, imagenet_lists, image_size)
    if name == "cifar10":
        pack = jpeg_pack(data_dir)
        original_on_disk = (data_dir / CIFAR_DIRS["cifar10"]).exists()
        if cifar10_source == "jpeg" or (cifar10_source == "auto" and pack.exists() and not original_on_disk):
            return load_cifar10_jpeg(pack, data_dir, cache_dir)
        try:
            return load_cifar_original("cifar10", data_dir, download)
        except DatasetMissing as e:
            raise DatasetMissing(f"{e} (the offline JPEG pack was looked for at {pack} and is absent)") from e
    return load_cifar_original(name, data_dir, download)


# ----------------------------------------------------------------------------------------------- LT subsets
def long_tailed_counts(n_max: int, rho: float, num_classes: int) -> list[int]:
    """n_c = floor(n_max * rho^(-c/(C-1))) for c = 0..C-1 (class 0 is the head), as in SDCLR / Cao et al."""
    if num_classes < 2:
        raise ValueError("a long-tailed profile needs at least 2 classes")
    # the 1e-9 guards against 44.99999... where the exact value is an integer (4500 * 100^-1 = 45)
    return [int(math.floor(n_max * rho ** (-c / (num_classes - 1)) + 1e-9)) for c in range(num_classes)]


def long_tailed_indices(labels: np.ndarray, n_max: int, rho: float, seed: int) -> np.ndarray:
    """Indices of a long-tailed subset: n_c images of class c drawn without replacement with `seed` (sorted)."""
    C = int(labels.max()) + 1
    counts = long_tailed_counts(n_max, rho, C)
    rng = np.random.default_rng(seed)
    out = []
    for c, n in enumerate(counts):
        pool = np.flatnonzero(labels == c)
        if n > len(pool):
            raise ValueError(f"class {c} has {len(pool)} images but the LT profile asks for {n} (n_max={n_max})")
        out.append(rng.choice(pool, size=n, replace=False))
    return np.sort(np.concatenate(out))


def balanced_indices(labels: np.ndarray, per_class: int, seed: int) -> np.ndarray:
    """Indices of a class-balanced subset with `per_class` images per class (0: all images)."""
    if per_class <= 0:
        return np.arange(len(labels))
    rng = np.random.default_rng(seed)
    out = []
    for c in range(int(labels.max()) + 1):
        pool = np.flatnonzero(labels == c)
        out.append(rng.choice(pool, size=min(per_class, len(pool)), replace=False))
    return np.sort(np.concatenate(out))
