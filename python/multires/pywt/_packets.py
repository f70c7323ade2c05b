"""PyWavelets' wavelet packets: ``WaveletPacket``, ``WaveletPacket2D``,
``WaveletPacketND`` and their nodes, with pywt's node API (paths such as
``wp['ad']``, ``.data``, ``.path``, ``.level``, ``get_level``,
``reconstruct``, ``get_leaf_nodes``, deleting nodes). Decomposing to a
level and reconstructing run a whole level of nodes as one batched engine
call (the nodes of a level stacked as rows), not a call per node.
Beyond pywt: ``best_basis`` (Coifman-Wickerhauser) and ``energies``.
"""
from __future__ import annotations

from collections import OrderedDict, defaultdict
from itertools import product

import numpy as np

from .. import _multires
from ._dwt import _check_dtype, _use_gpu, dwt, dwt_max_level, dwtn, idwt, idwtn
from ._wavelets import Wavelet, _mode_name, as_wavelet, Modes


def get_graycode_order(level, x="a", y="d"):
    """The paths of a level in frequency order (the Gray code)."""
    order = [x, y]
    for _ in range(level - 1):
        order = [x + p for p in order] + [y + p for p in order[::-1]]
    return order


def _entropy(data, kind):
    """Additive cost of a node's coefficients for the best basis."""
    e = np.abs(np.asarray(data, dtype=np.float64)) ** 2
    if kind == "shannon":
        nz = e[e > 0]
        return float(-np.sum(nz * np.log(nz)))
    if kind in ("log energy", "log_energy", "logenergy"):
        nz = e[e > 0]
        return float(np.sum(np.log(nz)))
    raise ValueError(f"entropy must be 'shannon' or 'log energy', got {kind!r}")


class BaseNode:
    """A node of a packet tree: its coefficients (``data``), its ``path``
    from the root (one name per level), ``level`` and ``maxlevel``."""

    PART_LEN = None
    PARTS = None

    def __init__(self, parent, data, node_name):
        self.parent = parent
        self._device = getattr(parent, "_device", "cpu")
        if parent is not None:
            self.wavelet = parent.wavelet
            self.mode = parent.mode
            self.level = parent.level + 1
            self._maxlevel = parent.maxlevel
            self.path = parent.path + node_name
            self.axes = parent.axes
        else:
            self.wavelet = None
            self.mode = None
            self.axes = None
            self.path = ""
            self.level = 0
        self.data = data
        self._data_shape = None if data is None else np.asarray(data).shape
        self._init_subnodes()

    # -- subnode storage (attributes named after the parts, as pywt) --
    def _init_subnodes(self):
        for part in self.PARTS:
            self._set_node(part, None)

    def _get_node(self, part):
        return getattr(self, part)

    def _set_node(self, part, node):
        setattr(self, part, node)

    def _delete_node(self, part):
        self._set_node(part, None)

    def _validate_node_name(self, part):
        if part not in self.PARTS:
            names = ", ".join(f"'{p}'" for p in self.PARTS)
            raise ValueError(f"Subnode name must be in [{names}], not '{part}'.")

    def _create_subnode(self, part, data=None, overwrite=True):
        self._validate_node_name(part)
        if not overwrite and self._get_node(part) is not None:
            return self._get_node(part)
        node = self._new_child(part, data)
        self._set_node(part, node)
        return node

    def _new_child(self, part, data):
        return type(self)._child_class()(self, data, part)

    @classmethod
    def _child_class(cls):
        return cls

    @property
    def path_tuple(self):
        n = len(self.path) // self.PART_LEN
        return tuple(self.path[i * self.PART_LEN : (i + 1) * self.PART_LEN] for i in range(n))

    def _evaluate_maxlevel(self, evaluate_from="parent"):
        if self._maxlevel is not None:
            return self._maxlevel
        if self.data is not None:
            return self.level + dwt_max_level(min(self.data.shape), self.wavelet)
        if evaluate_from == "parent":
            if self.parent is not None:
                return self.parent._evaluate_maxlevel(evaluate_from)
        else:
            for part in self.PARTS:
                node = self._get_node(part)
                if node is not None:
                    level = node._evaluate_maxlevel(evaluate_from)
                    if level is not None:
                        return level
        return None

    @property
    def maxlevel(self):
        if self._maxlevel is None:
            self._maxlevel = self._evaluate_maxlevel("parent")
            if self._maxlevel is None:
                self._maxlevel = self._evaluate_maxlevel("subnodes")
        return self._maxlevel

    @property
    def node_name(self):
        return self.path[-self.PART_LEN :]

    @property
    def is_empty(self):
        return self.data is None

    @property
    def has_any_subnode(self):
        return any(self._get_node(p) is not None for p in self.PARTS)

    # -- the transforms (one node; the batched forms are below) --
    def _split(self, data):
        """{part: coefficients} of one level of ``data``."""
        raise NotImplementedError

    def _merge(self, parts):
        """The inverse of ``_split`` ({part: array or None})."""
        raise NotImplementedError

    def _batch_axes(self):
        """The transformed axes once nodes are stacked on a new axis 0."""
        raise NotImplementedError

    def decompose(self):
        """Creates (overwriting) the subnodes from this node's data."""
        if self.level < self.maxlevel:
            return self._decompose()
        raise ValueError("Maximum decomposition level reached.")

    def _decompose(self):
        if self.is_empty:
            for part in self.PARTS:
                if self._get_node(part) is None:
                    self._create_subnode(part, None)
        else:
            for part, c in self._split(self.data).items():
                self._create_subnode(part, c)
        return tuple(self._get_node(p) for p in self.PARTS)

    def reconstruct(self, update=False):
        """The data rebuilt from the subnodes (this node's data when it
        has none); ``update`` stores it as this node's data."""
        if not self.has_any_subnode:
            return self.data
        rec = _reconstruct_batched(self)
        if update:
            self.data = rec
        return rec

    def get_subnode(self, part, decompose=True):
        self._validate_node_name(part)
        sub = self._get_node(part)
        if sub is None and decompose and not self.is_empty:
            self.decompose()
            sub = self._get_node(part)
        return sub

    def __getitem__(self, path):
        if isinstance(path, tuple):
            try:
                path = "".join(path)
            except TypeError:
                raise TypeError(f"Invalid path parameter type - expected string or tuple of strings but got {type(path)}.") from None
        if not isinstance(path, str):
            raise TypeError(f"Invalid path parameter type - expected string or tuple of strings but got {type(path)}.")
        if self.maxlevel is not None and len(path) > self.maxlevel * self.PART_LEN:
            raise IndexError("Path length is out of range.")
        if not path:
            return self
        sub = self.get_subnode(path[: self.PART_LEN], True)
        if sub is None:
            raise IndexError(f"node {self.path + path[: self.PART_LEN]!r} does not exist (its parent has no data)")
        return sub[path[self.PART_LEN :]]

    def __setitem__(self, path, data):
        if not isinstance(path, str):
            raise TypeError(f"Invalid path parameter type - expected string but got {type(path)}.")
        if self.maxlevel is not None and len(self.path) + len(path) > self.maxlevel * self.PART_LEN:
            raise IndexError("Path length out of range.")
        if path:
            part = path[: self.PART_LEN]
            sub = self.get_subnode(part, False)
            if sub is None:
                sub = self._create_subnode(part, None)
            sub[path[self.PART_LEN :]] = data
        else:
            arr = np.asarray(data.data if isinstance(data, BaseNode) else data)
            self.data = arr.astype(_check_dtype(arr), copy=False)

    def __delitem__(self, path):
        node = self[path]
        parent = node.parent
        node.parent = None
        if parent is not None and node.node_name:
            parent._delete_node(node.node_name)

    def walk(self, func, args=(), kwargs=None, decompose=True):
        """Calls ``func(node, *args, **kwargs)`` top-down; descends while it
        returns True."""
        kwargs = kwargs or {}
        if func(self, *args, **kwargs) and self.level < self.maxlevel:
            for part in self.PARTS:
                sub = self.get_subnode(part, decompose)
                if sub is not None:
                    sub.walk(func, args, kwargs, decompose)

    def walk_depth(self, func, args=(), kwargs=None, decompose=True):
        """Calls ``func(node, *args, **kwargs)`` bottom-up (children first)."""
        kwargs = kwargs or {}
        if self.level < self.maxlevel:
            for part in self.PARTS:
                sub = self.get_subnode(part, decompose)
                if sub is not None:
                    sub.walk_depth(func, args, kwargs, decompose)
        func(self, *args, **kwargs)

    def get_leaf_nodes(self, decompose=False):
        """The nodes without subnodes (with ``decompose``, the full tree's
        nodes at ``maxlevel``)."""
        if decompose:
            _decompose_batched(self, self.maxlevel)
        result = []

        def collect(node):
            if node.level == node.maxlevel and not node.is_empty:
                result.append(node)
                return False
            if not decompose and not node.has_any_subnode:
                result.append(node)
                return False
            return True

        self.walk(collect, decompose=decompose)
        return result

    def _nodes_at(self, level, decompose):
        if decompose:
            _decompose_batched(self, level)
        result = []

        def collect(node):
            if node.level == level:
                result.append(node)
                return False
            return True

        self.walk(collect, decompose=decompose)
        return result

    def energies(self, level, order="freq"):
        """Σ|c|² of every node of ``level`` (a feature vector, frequency
        order by default; 'natural' for the path order)."""
        nodes = self.get_level(level) if isinstance(self, NodeND) else self.get_level(level, order)
        flat = [n for row in nodes for n in (row if isinstance(row, list) else [row])]
        return np.array([float(np.sum(np.abs(n.data) ** 2)) for n in flat])

    def best_basis(self, entropy="shannon", level=None):
        """The Coifman-Wickerhauser best basis: the leaf nodes that minimise
        the summed additive entropy ('shannon': -Σ c² log c², or 'log
        energy': Σ log c²) over the tree decomposed to ``level`` (default
        ``maxlevel``). A parent is kept where its cost is at most its
        children's best."""
        level = self.maxlevel if level is None else level
        _decompose_batched(self, level)

        def best(node):
            own = _entropy(node.data, entropy)
            kids = [node._get_node(p) for p in node.PARTS]
            if node.level >= level or any(k is None or k.is_empty for k in kids):
                return own, [node]
            costs, leaves = zip(*(best(k) for k in kids))
            if own <= sum(costs):
                return own, [node]
            return sum(costs), [leaf for ls in leaves for leaf in ls]

        return best(self)[1]

    def __str__(self):
        return self.path + ": " + str(self.data)


def _as_stack(arrays):
    """``np.stack(arrays)``, or without a copy the array whose rows they
    already are (a packet level's output is the next level's stack)."""
    b = arrays[0].base
    if (
        isinstance(b, np.ndarray)
        and b.ndim == 2
        and b.flags.c_contiguous
        and b.shape[0] == len(arrays)
        and b.dtype == arrays[0].dtype
    ):
        p0, st = b.ctypes.data, b.strides[0]
        if all(a.base is b and a.shape == b.shape[1:] and a.ctypes.data == p0 + i * st for i, a in enumerate(arrays)):
            return b
    return np.stack(arrays)


def _packed(node, arrays):
    """Whether a group of 1-D real rows can take the packet-level kernels."""
    return type(node)._child_class() is Node and arrays[0].ndim == 1 and arrays[0].dtype in (np.float32, np.float64)


def _split_rows(stack, w, mode, device):
    """(k, n) rows to (2k, m): rows 2i, 2i + 1 the (a, d) of row i."""
    if device == "cuda":
        a, d = _multires.wavedec_cuda(stack, w._filters, mode, 1)
        out = np.empty((2 * a.shape[0], a.shape[1]), dtype=a.dtype)
        out[0::2], out[1::2] = a, d
        return out
    return _multires.packet_split(stack, w._filters, mode)


def _merge_rows(pairs, w, mode, keep, device):
    """(2k, m) interleaved (a, d) rows to (k, keep), as ``_split_rows`` inverted."""
    if device == "cuda":
        rec = _multires.waverec_cuda([np.ascontiguousarray(pairs[0::2]), np.ascontiguousarray(pairs[1::2])], w._filters, mode)
        return np.ascontiguousarray(rec[:, :keep])
    return _multires.packet_merge(pairs, w._filters, mode, keep)


def _whole_tree_on_gpu(root, level):
    """A fresh 1-D tree on the GPU: every level to ``level`` in one call,
    the tree on the device between levels. Whether it was done."""
    if not (root.parent is None and root._device == "cuda" and type(root)._child_class() is Node):
        return False
    if root.is_empty or root.has_any_subnode or root.data.ndim != 1 or root.data.dtype not in (np.float32, np.float64):
        return False
    depth = min(level, root.maxlevel)
    if depth < 1:
        return True
    w, mode = as_wavelet(root.wavelet), _mode_name(Modes.from_object(root.mode))
    parents = [root]
    for arr in _multires.packet_levels_cuda(np.ascontiguousarray(root.data), w._filters, mode, depth):
        # Block order (the GPU DWT's layout, details first): row b is the
        # 'd' (b < R) or 'a' child of parent row b mod R.
        r = len(parents)
        parents = [parents[b % r]._create_subnode("d" if b < r else "a", arr[b]) for b in range(arr.shape[0])]
    return True


def _decompose_batched(root, level):
    """Decomposes every node above ``level`` the way ``walk`` would (nodes
    with data lacking a subnode), one engine call per level and shape."""
    if _whole_tree_on_gpu(root, level):
        return
    frontier = [root]
    while frontier:
        todo, nxt = [], []
        for node in frontier:
            if node.level >= min(level, node.maxlevel):
                continue
            if not node.is_empty and not all(node._get_node(p) is not None for p in node.PARTS):
                todo.append(node)
            else:
                nxt += [node._get_node(p) for p in node.PARTS if node._get_node(p) is not None]
        groups = defaultdict(list)
        for node in todo:
            groups[(node.data.shape, node.data.dtype, type(node))].append(node)
        for nodes in groups.values():
            if _packed(nodes[0], [nodes[0].data]):
                w, mode = nodes[0].wavelet, _mode_name(Modes.from_object(nodes[0].mode))
                out = _split_rows(_as_stack([n.data for n in nodes]), as_wavelet(w), mode, nodes[0]._device)
                for i, node in enumerate(nodes):
                    node._create_subnode("a", out[2 * i])
                    node._create_subnode("d", out[2 * i + 1])
            elif len(nodes) == 1:
                nodes[0]._decompose()
            else:
                parts = nodes[0]._split_batch(np.stack([n.data for n in nodes]))
                for i, node in enumerate(nodes):
                    for part in node.PARTS:
                        node._create_subnode(part, parts[part][i])
        for node in todo:
            nxt += [node._get_node(p) for p in node.PARTS]
        frontier = nxt


def _reconstruct_batched(root):
    """``root``'s data rebuilt bottom-up from its subtree as pywt's
    recursive reconstruct does, one engine call per level and shape."""
    by_level = defaultdict(list)
    stack = [root]
    while stack:
        node = stack.pop()
        if node.has_any_subnode:
            by_level[node.level].append(node)
            stack += [node._get_node(p) for p in node.PARTS if node._get_node(p) is not None]
    rec = {}
    for lev in sorted(by_level, reverse=True):
        groups = defaultdict(list)
        # Natural (path) order, so that a decomposed level's rows are already a stack.
        for node in sorted(by_level[lev], key=lambda n: n.path):
            parts = {}
            for p in node.PARTS:
                kid = node._get_node(p)
                parts[p] = None if kid is None else rec.get(id(kid), kid.data)
            if all(v is None for v in parts.values()):
                raise ValueError(f"Tree is missing data - all subnodes of `{node.path}` node are None. Cannot reconstruct node.")
            sig = tuple(None if v is None else (v.shape, v.dtype) for v in parts.values())
            groups[(sig, type(node), node._data_shape)].append((node, parts))
        for (sig, _, keep), items in groups.items():
            first = items[0][0]
            if None not in sig and _packed(first, list(items[0][1].values())):
                rows = [it[1][p] for it in items for p in ("a", "d")]
                n_keep = keep[0] if keep is not None else None
                w, mode = as_wavelet(first.wavelet), _mode_name(Modes.from_object(first.mode))
                if n_keep is None:  # pywt's idwt length, untrimmed
                    m = rows[0].shape[0]
                    n_keep = 2 * m if mode == "periodization" else 2 * m - w.rec_len + 2
                out = _merge_rows(_as_stack(rows), w, mode, n_keep, first._device)
                del rows
                for node, _ in items:
                    for p in node.PARTS:
                        rec.pop(id(node._get_node(p)), None)
                for i, (node, _) in enumerate(items):
                    rec[id(node)] = out[i]
                continue
            if len(items) == 1:
                merged = [items[0][0]._merge(items[0][1])]
            else:
                stacked = {p: None if items[0][1][p] is None else np.stack([it[1][p] for it in items]) for p in items[0][0].PARTS}
                merged = list(items[0][0]._merge_batch(stacked))
            for node, _ in items:
                for p in node.PARTS:  # children's rebuilt data are no longer needed
                    kid = node._get_node(p)
                    if kid is not None:
                        rec.pop(id(kid), None)
            for (node, _), r in zip(items, merged):
                if node._data_shape is not None and r.shape != node._data_shape:
                    r = r[tuple(slice(s) for s in node._data_shape)]
                rec[id(node)] = r
    return rec[id(root)]


class Node(BaseNode):
    """A 1-D packet node: subnodes 'a' (approximation) and 'd' (detail)."""

    A = "a"
    D = "d"
    PARTS = A, D
    PART_LEN = 1

    @classmethod
    def _child_class(cls):
        return Node

    def _split(self, data):
        a, d = dwt(data, self.wavelet, self.mode, axis=self.axes)
        return {"a": a, "d": d}

    def _split_batch(self, stacked):
        a, d = dwt(stacked, self.wavelet, self.mode, axis=self.axes + 1)
        return {"a": a, "d": d}

    def _merge(self, parts):
        return idwt(parts["a"], parts["d"], self.wavelet, self.mode, axis=self.axes)

    def _merge_batch(self, parts):
        if parts["a"] is None and parts["d"] is None:
            raise ValueError("Node is a leaf node and cannot be reconstructed from subnodes.")
        return idwt(parts["a"], parts["d"], self.wavelet, self.mode, axis=self.axes + 1)


class Node2D(BaseNode):
    """A 2-D packet node: subnodes 'a' (LL), 'h' (HL), 'v' (LH), 'd' (HH)."""

    LL = "a"
    HL = "h"
    LH = "v"
    HH = "d"
    PARTS = LL, HL, LH, HH
    PART_LEN = 1

    @classmethod
    def _child_class(cls):
        return Node2D

    def _split(self, data, axes=None):
        c = dwtn(data, self.wavelet, self.mode, axes=self.axes if axes is None else axes)
        return {"a": c["aa"], "h": c["da"], "v": c["ad"], "d": c["dd"]}

    def _split_batch(self, stacked):
        return self._split(stacked, axes=self._shifted(stacked.ndim))

    def _shifted(self, ndim):
        return tuple((a % (ndim - 1)) + 1 for a in self.axes)

    def _merge(self, parts, axes=None):
        c = {"aa": parts["a"], "da": parts["h"], "ad": parts["v"], "dd": parts["d"]}
        return idwtn(c, self.wavelet, self.mode, axes=self.axes if axes is None else axes)

    def _merge_batch(self, parts):
        nd = next(v.ndim for v in parts.values() if v is not None)
        return self._merge(parts, axes=self._shifted(nd))

    def expand_2d_path(self, path):
        """(row path, column path) of a 2-D path in 'l'/'h' letters."""
        names = {"d": "hh", "h": "hl", "v": "lh", "a": "ll"}
        return "".join(names[p][0] for p in path), "".join(names[p][1] for p in path)


class NodeND(BaseNode):
    """An n-D packet node: subnodes named by one 'a'/'d' letter per axis."""

    def __init__(self, parent, data, node_name, ndim, ndim_transform):
        self.PART_LEN = ndim_transform
        self.PARTS = OrderedDict(("".join(k), None) for k in product("ad", repeat=ndim_transform))
        self.ndim = ndim
        self.ndim_transform = ndim_transform
        super().__init__(parent, data, node_name)

    def _init_subnodes(self):
        pass

    def _get_node(self, part):
        return self.PARTS[part]

    def _set_node(self, part, node):
        if part not in self.PARTS:
            raise ValueError("invalid part")
        self.PARTS[part] = node

    def _new_child(self, part, data):
        return NodeND(self, data, part, self.ndim, self.ndim_transform)

    def _split(self, data, axes=None):
        return dwtn(data, self.wavelet, self.mode, axes=self.axes if axes is None else axes)

    def _shifted(self, ndim):
        return tuple((a % (ndim - 1)) + 1 for a in self.axes)

    def _split_batch(self, stacked):
        return self._split(stacked, axes=self._shifted(stacked.ndim))

    def _merge(self, parts, axes=None):
        return idwtn(dict(parts), self.wavelet, self.mode, axes=self.axes if axes is None else axes)

    def _merge_batch(self, parts):
        nd = next(v.ndim for v in parts.values() if v is not None)
        return self._merge(parts, axes=self._shifted(nd))


def _check_level(tree, level, order):
    if order not in ("natural", "freq"):
        raise ValueError(f"Invalid order: {order}")
    if level > tree.maxlevel:
        raise ValueError(f"The level cannot be greater than the maximum decomposition level value ({tree.maxlevel})")


class WaveletPacket(Node):
    """1-D wavelet packet tree of ``data`` along ``axis``, as
    ``pywt.WaveletPacket``: nodes by path (``wp['ad']``), decomposed on
    access; ``maxlevel`` defaults to ``dwt_max_level``. ``device='cuda'``
    (or 'auto' with a GPU) runs the levels of a 1-D signal on the GPU
    (equal to the CPU's to 1e-12 in float64)."""

    def __init__(self, data, wavelet, mode="symmetric", maxlevel=None, axis=-1, *, device="cpu"):
        super().__init__(None, data, "")
        self._device = "cuda" if _use_gpu(device) else "cpu"
        self.wavelet = as_wavelet(wavelet) if not isinstance(wavelet, Wavelet) else wavelet
        self.mode = mode
        self.axes = axis
        if data is not None:
            data = np.asarray(data)
            if self.axes < 0:
                self.axes += data.ndim
            if not 0 <= self.axes < data.ndim:
                raise ValueError("Axis greater than data dimensions")
            self.data_size = data.shape
            if maxlevel is None:
                maxlevel = dwt_max_level(data.shape[self.axes], self.wavelet)
        else:
            self.data_size = None
        self._maxlevel = maxlevel

    def __reduce__(self):
        return (WaveletPacket, (self.data, self.wavelet, self.mode, self.maxlevel))

    def reconstruct(self, update=True):
        """The signal from the tree's leaves (the data itself when the
        root has no subnodes); ``update`` stores it as the root's data."""
        if not self.has_any_subnode:
            return self.data
        data = _reconstruct_batched(self)
        if self.data_size is not None and data.shape != self.data_size:
            data = data[tuple(slice(s) for s in self.data_size)]
        if update:
            self.data = data
        return data

    def get_level(self, level, order="natural", decompose=True):
        """The nodes of ``level``: in path order ('natural') or frequency
        order ('freq', the Gray code)."""
        _check_level(self, level, order)
        result = self._nodes_at(level, decompose)
        if order == "freq":
            by_path = {n.path: n for n in result}
            result = [by_path[p] for p in get_graycode_order(level) if p in by_path]
        return result


class WaveletPacket2D(Node2D):
    """2-D wavelet packet tree, as ``pywt.WaveletPacket2D`` (nodes 'a', 'h',
    'v', 'd' per level)."""

    def __init__(self, data, wavelet, mode="smooth", maxlevel=None, axes=(-2, -1)):
        super().__init__(None, data, "")
        self.wavelet = as_wavelet(wavelet) if not isinstance(wavelet, Wavelet) else wavelet
        self.mode = mode
        self.axes = tuple(axes)
        if len(np.unique(self.axes)) != 2:
            raise ValueError("Expected two unique axes.")
        if data is not None:
            data = np.asarray(data)
            if data.ndim < 2:
                raise ValueError("WaveletPacket2D requires data with 2 or more dimensions.")
            self.data_size = data.shape
            if maxlevel is None:
                maxlevel = dwt_max_level(min(data.shape[a] for a in self.axes), self.wavelet)
        else:
            self.data_size = None
        self._maxlevel = maxlevel

    def __reduce__(self):
        return (WaveletPacket2D, (self.data, self.wavelet, self.mode, self.maxlevel))

    reconstruct = WaveletPacket.reconstruct

    def get_level(self, level, order="natural", decompose=True):
        """The nodes of ``level``: a list in path order ('natural'), or
        ('freq') rows of nodes in frequency order along each axis."""
        _check_level(self, level, order)
        result = self._nodes_at(level, decompose)
        if order == "freq":
            rows = {}
            for node in result:
                r, c = self.expand_2d_path(node.path)
                rows.setdefault(r, {})[c] = node
            gray = get_graycode_order(level, x="l", y="h")
            result = [[row[c] for c in gray if c in row] for row in (rows[r] for r in gray if r in rows)]
        return result


class WaveletPacketND(NodeND):
    """n-D wavelet packet tree over ``axes``, as ``pywt.WaveletPacketND``."""

    def __init__(self, data, wavelet, mode="smooth", maxlevel=None, axes=None):
        if data is None and axes is None:
            raise ValueError("If data is None, axes must be specified")
        if axes is None:
            axes = range(np.ndim(data))
        elif np.isscalar(axes):
            axes = (axes,)
        axes = tuple(axes)
        if len(np.unique(axes)) != len(axes):
            raise ValueError("Expected a set of unique axes.")
        if data is not None:
            data = np.asarray(data)
            if data.ndim == 0:
                raise ValueError("data must be at least 1D")
            ndim = data.ndim
        else:
            ndim = len(axes)
        super().__init__(None, data, "", ndim, len(axes))
        self.wavelet = as_wavelet(wavelet) if not isinstance(wavelet, Wavelet) else wavelet
        self.mode = mode
        self.axes = axes
        if data is not None:
            if data.ndim < len(axes):
                raise ValueError("The number of axes exceeds the number of data dimensions.")
            self.data_size = data.shape
            if maxlevel is None:
                maxlevel = dwt_max_level(min(data.shape[a] for a in axes), self.wavelet)
        else:
            self.data_size = None
        self._maxlevel = maxlevel

    def __reduce__(self):
        return (WaveletPacketND, (self.data, self.wavelet, self.mode, self.maxlevel, self.axes))

    reconstruct = WaveletPacket.reconstruct

    def get_level(self, level, decompose=True):
        """The nodes of ``level`` in path order."""
        _check_level(self, level, "natural")
        return self._nodes_at(level, decompose)
