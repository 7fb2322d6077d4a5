"""The offline CIFAR-10 JPEG pack: locating it, checking it (path, size, digest, shapes), decoding it once into a
cache keyed on its content."""
from __future__ import annotations

import hashlib
import io
import os
import warnings
import zipfile
import zlib
from pathlib import Path
import numpy as np

from ..paths import repo_root
from .images import DatasetMissing, ImageData, default_data_dir, hwc_split


def shared_jpeg_pack() -> Path:
    """Where the offline CIFAR-10 JPEG pack is expected: <repo root's parent>/shared/data/cifar10-jpeg.npz."""
    try:
        root = repo_root()
    except FileNotFoundError:
        root = Path.cwd()
    return root.parent / "shared" / "data" / "cifar10-jpeg.npz"


def jpeg_pack(data_dir: Path) -> Path:
    """The JPEG pack to use: data_dir/cifar10-jpeg.npz when present, else the shared one (shared_jpeg_pack)."""
    own = Path(data_dir) / "cifar10-jpeg.npz"
    return own if own.exists() else shared_jpeg_pack()


def default_cache_dir(data_dir: str | Path = "") -> Path:
    """Where decoded arrays are cached: $IMBALANCED_CL_CACHE, else the data folder (see default_data_dir)."""
    env = os.environ.get("IMBALANCED_CL_CACHE")
    if env:
        return Path(env).expanduser()
    return Path(data_dir).expanduser() if data_dir else default_data_dir()


def _atomic_save_npz(path: Path, **arrays) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp.npz")
    try:
        np.savez(tmp, **arrays)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


# ----------------------------------------------------------------------------------------------- CIFAR JPEG pack
class DatasetCorrupt(ValueError):
    """A data file exists but cannot be used: the message names it, says what is wrong and how to get a good copy."""


# The pack this book was built with (../shared/data/README.md); another pack with the same layout is accepted.
PACK_BYTES = 55_793_123


PACK_SHA256 = "b1091c5ea41ae05745b054dfe78e169e8ec1f4dc2df004961759ace1b182b15c"


PACK_KEYS = ("train_jpeg", "train_offsets", "train_labels", "test_jpeg", "test_offsets", "test_labels", "classes")


def pack_help(pack: Path, data_dir: Path) -> str:
    """How to get a good copy of the JPEG pack (one sentence, ending with a full stop)."""
    return (f"To get a good copy, copy cifar10-jpeg.npz again from the project's shared data folder (shared/data/ "
            f"beside the repository, described in its README.md; the known-good file is {PACK_BYTES:,} bytes, "
            f"sha256 {PACK_SHA256[:16]}...) to {pack}, or set cifar10_source='original' to download the original "
            f"CIFAR-10 release into {data_dir}.")


def file_digest(path: Path, chunk: int = 1 << 20) -> str:
    """sha256 of a file's bytes (hex), read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def read_jpeg_pack(pack: Path, data_dir: Path | None = None) -> dict:
    """The arrays of a CIFAR JPEG pack, with their layout checked; DatasetMissing / DatasetCorrupt otherwise."""
    pack, data_dir = Path(pack), (data_dir or default_data_dir())
    if not pack.exists():
        raise DatasetMissing(f"cifar10: the JPEG pack {pack} does not exist. {pack_help(pack, data_dir)}")
    size = pack.stat().st_size
    try:
        with np.load(pack, allow_pickle=False) as z:
            missing = [k for k in PACK_KEYS if k not in z.files]
            if missing:
                raise DatasetCorrupt(f"cifar10: the JPEG pack {pack} lacks the array(s) {missing} (it has "
                                     f"{sorted(z.files)}). {pack_help(pack, data_dir)}")
            arrays = {k: z[k] for k in PACK_KEYS}
    except DatasetCorrupt:
        raise
    except (zipfile.BadZipFile, zlib.error, ValueError, OSError, EOFError, KeyError) as e:
        # a cut-off download loses the zip's central directory (BadZipFile); flipped bytes fail its CRC
        what = "truncated or not a .npz archive" if isinstance(e, (zipfile.BadZipFile, EOFError)) else "unreadable"
        if "CRC" in str(e):
            what = "corrupt (a member fails its checksum)"
        raise DatasetCorrupt(f"cifar10: the JPEG pack {pack} ({size:,} bytes) is {what}: {type(e).__name__}: {e}. "
                             f"{pack_help(pack, data_dir)}") from None
    _check_pack(arrays, pack, data_dir)
    return arrays


def _check_pack(a: dict, pack: Path, data_dir: Path) -> None:
    """Raise DatasetCorrupt naming the first array whose dtype, shape or values break the pack's layout."""
    def bad(name, what):
        raise DatasetCorrupt(f"cifar10: in the JPEG pack {pack}, {name} {what}. {pack_help(pack, data_dir)}")

    classes = a["classes"]
    if classes.ndim != 1 or classes.dtype.kind != "U" or len(classes) < 2:
        bad("classes", f"should be a 1-D array of class names, got dtype {classes.dtype}, shape {classes.shape}")
    for split in ("train", "test"):
        blob, off, lab = a[f"{split}_jpeg"], a[f"{split}_offsets"], a[f"{split}_labels"]
        if blob.ndim != 1 or blob.dtype != np.uint8:
            bad(f"{split}_jpeg", f"should be 1-D uint8 (JPEG bytes), got dtype {blob.dtype}, shape {blob.shape}")
        if lab.ndim != 1 or lab.dtype.kind not in "iu" or len(lab) == 0:
            bad(f"{split}_labels", f"should be a non-empty 1-D integer array, got dtype {lab.dtype}, shape "
                                   f"{lab.shape}")
        n = len(lab)
        if off.shape != (n + 1,) or off.dtype.kind not in "iu":
            bad(f"{split}_offsets", f"should be integers of shape ({n + 1},) (one more than {split}_labels), got "
                                    f"dtype {off.dtype}, shape {off.shape}")
        if off[0] != 0 or off[-1] != len(blob) or np.any(np.diff(off) <= 0):
            bad(f"{split}_offsets", f"should rise strictly from 0 to len({split}_jpeg) = {len(blob):,}, got "
                                    f"{int(off[0])} ... {int(off[-1]):,}")
        if lab.min() < 0 or lab.max() >= len(classes):
            bad(f"{split}_labels", f"should lie in 0..{len(classes) - 1} (one per class name), got "
                                   f"{int(lab.min())}..{int(lab.max())}")


def _decode_jpegs(blob: np.ndarray, offsets: np.ndarray, where: str = "", size: int = 32) -> np.ndarray:
    """Decode the JPEGs blob[offsets[i]:offsets[i+1]] to uint8 (n, size, size, 3); DatasetCorrupt naming the image."""
    from PIL import Image, UnidentifiedImageError
    n = len(offsets) - 1
    out = np.empty((n, size, size, 3), dtype=np.uint8)
    for i in range(n):
        try:
            with Image.open(io.BytesIO(blob[offsets[i]:offsets[i + 1]].tobytes())) as im:
                rgb = np.asarray(im.convert("RGB"))
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as e:
            raise DatasetCorrupt(f"{where}image {i} is not a decodable JPEG ({type(e).__name__}: {e})") from None
        if rgb.shape != (size, size, 3):
            raise DatasetCorrupt(f"{where}image {i} decodes to {rgb.shape[1]}x{rgb.shape[0]} pixels, expected "
                                 f"{size}x{size}")
        out[i] = rgb
    return out


def load_cifar10_jpeg(pack: Path, data_dir: Path, cache_dir: Path | None = None) -> ImageData:
    """CIFAR-10 from the offline JPEG pack; the decoded arrays are cached under a name keyed on the pack's sha256.

    The cache lives in cache_dir (default: $IMBALANCED_CL_CACHE, else data_dir), so a new or changed pack never
    reuses the arrays of another. A cache that cannot be read is decoded again; a pack that cannot be read stops
    with DatasetMissing / DatasetCorrupt.
    """
    pack, data_dir = Path(pack), Path(data_dir)
    if not pack.exists():
        raise DatasetMissing(f"cifar10: the JPEG pack {pack} does not exist. {pack_help(pack, data_dir)}")
    digest = file_digest(pack)
    cache = Path(cache_dir or default_cache_dir(data_dir)) / f"cifar10-jpeg-decoded-{digest[:16]}.npz"
    arrays = None
    if cache.exists():
        try:
            with np.load(cache, allow_pickle=False) as z:
                if str(z["pack_sha256"]) == digest:
                    arrays = {k: z[k] for k in ("train_x", "train_y", "test_x", "test_y", "classes")}
        except Exception as e:     # our own cache, half-written or damaged: decode again
            warnings.warn(f"decoded cache {cache} is unreadable ({type(e).__name__}: {e}); decoding the pack again")
    if arrays is None:
        z = read_jpeg_pack(pack, data_dir)
        try:
            xtr = _decode_jpegs(z["train_jpeg"], z["train_offsets"], "the train split's ")
            xte = _decode_jpegs(z["test_jpeg"], z["test_offsets"], "the test split's ")
        except DatasetCorrupt as e:
            raise DatasetCorrupt(f"cifar10: in the JPEG pack {pack}, {e}. {pack_help(pack, data_dir)}") from None
        arrays = {"train_x": xtr, "train_y": z["train_labels"], "test_x": xte, "test_y": z["test_labels"],
                  "classes": z["classes"]}
        try:
            _atomic_save_npz(cache, pack_sha256=np.array(digest), **arrays)
        except OSError:
            pass  # a read-only cache folder only costs the decode next time
    return ImageData("cifar10", hwc_split(arrays["train_x"], arrays["train_y"]),
                     hwc_split(arrays["test_x"], arrays["test_y"]), [str(c) for c in arrays["classes"]],
                     f"CIFAR-10 re-encoded as JPEG (lossy; {pack}), not the original binary release")
