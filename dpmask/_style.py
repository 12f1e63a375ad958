"""The one palette of every figure, and the check that a figure's series read without colour.

Palette.  :data:`PALETTE` is the Okabe–Ito palette of eight colours chosen to stay apart for the
common forms of colour blindness (Okabe and Ito 2008; references.bib: okabe2008cud), in the order of
matplotlib's first default colours, so that ``"C0"`` is still blue, ``"C1"`` orange, ``"C2"``
green and ``"C3"`` red (vermilion) and a caption's colour names stay true.  :func:`use_palette`
makes it matplotlib's colour cycle (``dpmask.book`` does so when a chapter imports it); the
explorers take their colours from :func:`color`.

Reading without colour.  Hue alone never tells two series apart: every figure also varies the
line style or the marker (:data:`LINESTYLES`, :data:`MARKERS`).  :func:`indistinct_series` checks
a drawn figure: within each axes, two series (lines with data, markers or not) must differ in
line style or marker, or else their colours must stay at least :data:`MIN_DELTA_E` apart
(CIEDE2000) both for a reader with deuteranopia (the simulation of Machado, Oliveira and Fernandes
2009; machado2009cvd), at full severity, in linear sRGB) and in greyscale (lightness
alone).  ``dpmask.book.show_figure`` refuses a figure that fails it.
"""

from __future__ import annotations

import itertools

import numpy as np

__all__ = ["PALETTE", "LINESTYLES", "MARKERS", "MARKEVERY", "NEUTRAL", "MIN_DELTA_E", "color", "series", "use_palette",
           "deuteranopia", "greyscale_lightness", "srgb_to_lab", "delta_e_2000", "figure_series",
           "indistinct_series"]

#: Okabe–Ito: blue, orange, bluish green, vermilion, reddish purple, sky blue, yellow, black.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
#: Line styles in the order a figure should use them (the last two: dash-dot-dot, long dashes).
LINESTYLES = ("-", "--", ":", "-.", (0, (5, 1.5, 1, 1.5, 1, 1.5)), (0, (9, 3)))
#: Markers in the order a figure should use them.
MARKERS = ("o", "s", "^", "D", "v", "X", "P", "*")
#: Markers sit about every tenth of the axes' diagonal along a line (matplotlib's ``markevery``).
MARKEVERY = 0.1
#: Grey of reference lines (zero, a target level, the slider's place).
NEUTRAL = "0.55"
#: Two series that differ only in colour must be at least this far apart (CIEDE2000) under
#: deuteranopia and in greyscale: about five times a just-noticeable difference.
MIN_DELTA_E = 10.0

# Machado, Oliveira, Fernandes (2009), Table 1: deuteranopia at severity 1.0, on linear sRGB.
_DEUTAN = np.array([
    [0.367322, 0.860646, -0.227968],
    [0.280085, 0.672501, 0.047413],
    [-0.011820, 0.042940, 0.968881],
])
# sRGB (linear) to CIE XYZ, D65 white (IEC 61966-2-1).
_RGB_TO_XYZ = np.array([
    [0.4124, 0.3576, 0.1805],
    [0.2126, 0.7152, 0.0722],
    [0.0193, 0.1192, 0.9505],
])
_WHITE = _RGB_TO_XYZ @ np.ones(3)


def color(i):
    """The palette's colour number *i* (cycling), as a hex string."""
    return PALETTE[int(i) % len(PALETTE)]


def series(i, style=0, marker=True):
    """Keyword arguments for ``Axes.plot`` of series *i*: colour *i*, line style number *style*, marker *i*.

    With *marker* False the series is told apart by its line style alone (the caller then gives
    each series of an axes its own *style*).
    """
    kw = {"color": color(i), "linestyle": LINESTYLES[int(style) % len(LINESTYLES)]}
    if marker:
        kw.update(marker=MARKERS[int(i) % len(MARKERS)], markevery=MARKEVERY, markersize=5)
    return kw


def use_palette():
    """Make :data:`PALETTE` matplotlib's colour cycle, so that ``"C0"``, ``"C1"``, ... are its colours."""
    import matplotlib as mpl
    from cycler import cycler

    mpl.rcParams["axes.prop_cycle"] = cycler(color=list(PALETTE))


def _linear(rgb):
    rgb = np.clip(np.asarray(rgb, float), 0.0, 1.0)
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def _gamma(lin):
    lin = np.clip(lin, 0.0, 1.0)
    return np.where(lin <= 0.0031308, 12.92 * lin, 1.055 * lin ** (1 / 2.4) - 0.055)


def deuteranopia(rgb):
    """sRGB colours (values in [0, 1], last axis of length 3) as a reader with deuteranopia sees them."""
    return _gamma(_linear(rgb) @ _DEUTAN.T)


def srgb_to_lab(rgb):
    """CIELAB (D65) of sRGB colours in [0, 1]."""
    xyz = (_linear(rgb) @ _RGB_TO_XYZ.T) / _WHITE
    d = 6 / 29
    f = np.where(xyz > d**3, np.cbrt(xyz), xyz / (3 * d**2) + 4 / 29)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], axis=-1)


def greyscale_lightness(rgb):
    """CIELAB lightness L* of sRGB colours: what a greyscale print keeps."""
    return srgb_to_lab(rgb)[..., 0]


def delta_e_2000(lab1, lab2):
    """CIEDE2000 colour difference of two CIELAB colours (Sharma, Wu, Dalal 2005; sharma2005ciede2000)."""
    L1, a1, b1 = np.moveaxis(np.asarray(lab1, float), -1, 0)
    L2, a2, b2 = np.moveaxis(np.asarray(lab2, float), -1, 0)
    C1, C2 = np.hypot(a1, b1), np.hypot(a2, b2)
    Cm = (C1 + C2) / 2
    G = 0.5 * (1 - np.sqrt(Cm**7 / (Cm**7 + 25.0**7)))
    a1p, a2p = (1 + G) * a1, (1 + G) * a2
    C1p, C2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360
    dLp, dCp = L2 - L1, C2p - C1p
    dh = h2p - h1p
    dh = np.where(C1p * C2p == 0, 0.0, np.where(dh > 180, dh - 360, np.where(dh < -180, dh + 360, dh)))
    dHp = 2 * np.sqrt(C1p * C2p) * np.sin(np.radians(dh) / 2)
    Lpm, Cpm = (L1 + L2) / 2, (C1p + C2p) / 2
    hsum = h1p + h2p
    hpm = np.where(C1p * C2p == 0, hsum,
                   np.where(np.abs(h1p - h2p) <= 180, hsum / 2, np.where(hsum < 360, (hsum + 360) / 2, (hsum - 360) / 2)))
    T = (1 - 0.17 * np.cos(np.radians(hpm - 30)) + 0.24 * np.cos(np.radians(2 * hpm))
         + 0.32 * np.cos(np.radians(3 * hpm + 6)) - 0.20 * np.cos(np.radians(4 * hpm - 63)))
    d_theta = 30 * np.exp(-(((hpm - 275) / 25) ** 2))
    RC = 2 * np.sqrt(Cpm**7 / (Cpm**7 + 25.0**7))
    SL = 1 + 0.015 * (Lpm - 50) ** 2 / np.sqrt(20 + (Lpm - 50) ** 2)
    SC, SH = 1 + 0.045 * Cpm, 1 + 0.015 * Cpm * T
    RT = -np.sin(np.radians(2 * d_theta)) * RC
    return np.sqrt((dLp / SL) ** 2 + (dCp / SC) ** 2 + (dHp / SH) ** 2 + RT * (dCp / SC) * (dHp / SH))


def _marker(line):
    m = line.get_marker()
    return None if m in (None, "", " ", "None", "none") else str(m)


def _linestyle(line):
    ls = line.get_linestyle()
    if ls in (None, "", " ", "None", "none"):
        return None
    # a dash pattern given as a tuple reads back as "--": tell patterns apart by the pattern itself
    pattern = getattr(line, "_unscaled_dash_pattern", (None, None))[1]
    return str(ls) if ls != "--" or pattern is None else f"--{tuple(round(float(v), 2) for v in pattern)}"


def _reference_line(line, x, y):
    """An unlabelled grey line across the axes (``axhline``, ``axvline``): a level, not a series."""
    from matplotlib.colors import to_rgb

    rgb = to_rgb(line.get_color())
    across = len(x) == 2 and (np.array_equal(x, [0, 1]) or np.array_equal(y, [0, 1]))
    return across and str(line.get_label()).startswith("_") and max(rgb) - min(rgb) < 0.02 and min(rgb) > 0.2


def figure_series(fig):
    """Every series of *fig*, per axes: ``[[{"label", "color", "linestyle", "marker"}, ...], ...]``.

    A series is a visible line with at least one finite point (a curve, a labelled level, a
    marker), but not an error bar's caps nor an unlabelled grey line across the axes (a zero line,
    a slider's place); ``color`` is its sRGB triple in [0, 1], ``linestyle`` and ``marker`` None
    when absent.
    """
    from matplotlib.colors import to_rgb

    from matplotlib.container import ErrorbarContainer

    out = []
    for ax in fig.axes:
        series = []
        caps = {id(cap) for c in ax.containers if isinstance(c, ErrorbarContainer) for cap in (c.lines[1] or ())}
        for line in ax.get_lines():
            if not line.get_visible() or id(line) in caps:  # an error bar's caps belong to its series
                continue
            x, y = (np.asarray(v, float) for v in line.get_data())
            if x.size == 0 or not np.any(np.isfinite(x) & np.isfinite(y)) or _reference_line(line, x, y):
                continue
            series.append({"label": str(line.get_label()), "color": to_rgb(line.get_color()),
                           "linestyle": _linestyle(line), "marker": _marker(line)})
        out.append(series)
    return out


def indistinct_series(fig, min_delta_e=MIN_DELTA_E):
    """The pairs of series of *fig* that a reader with deuteranopia or a greyscale print cannot tell apart.

    Two series of the same axes are told apart when their line styles or their markers differ,
    or when their colours are at least *min_delta_e* apart (CIEDE2000) both after the
    deuteranopia simulation and in greyscale.

    Returns
    -------
    list of str
        One sentence per pair that fails, naming both series and the distances; empty if none.
    """
    problems = []
    for k, series in enumerate(figure_series(fig)):
        for s, t in itertools.combinations(series, 2):
            if (s["linestyle"], s["marker"]) != (t["linestyle"], t["marker"]):
                continue
            c = np.array([s["color"], t["color"]])
            cvd = float(delta_e_2000(*srgb_to_lab(deuteranopia(c))))
            lum = greyscale_lightness(c)
            grey = float(delta_e_2000(*[np.array([L, 0.0, 0.0]) for L in lum]))
            if min(cvd, grey) < min_delta_e:
                problems.append(
                    f"axes {k}: {s['label']!r} and {t['label']!r} share line style {s['linestyle']!r} and marker "
                    f"{s['marker']!r}, and their colours are only {cvd:.1f} apart under deuteranopia and {grey:.1f} "
                    f"in greyscale (CIEDE2000; at least {min_delta_e:g} needed): change the line style or marker")
    return problems
