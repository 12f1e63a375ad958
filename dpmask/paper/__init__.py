"""What the paper states (chapters 2 to 5 and appendix A): its noise bounds, G_q, its releases, Table 1.

* :mod:`dpmask.paper.bounds` -- the noise bounds: Theorems 3.2 and 3.4, Corollaries 3.3 and 3.5,
  block-diagonal masking (Section 4);
* :mod:`dpmask.paper.gq` -- the function G_q of Lemmas 5.4 and 5.5, accurately in log space;
* :mod:`dpmask.paper.mechanisms` -- the releases: Settings A, B, C and block-diagonal masking;
* :mod:`dpmask.paper.table` -- Table 1, recomputed;
* :mod:`dpmask.paper.symbolic` -- the SymPy derivations of the lemmas (needs the extra ``book``;
  import it by name);
* ``dpmask.paper._ncx2`` -- the noncentral chi-square tails Theorem 3.4 needs (the exact family
  uses them too).

This family imports neither :mod:`dpmask.exact` nor :mod:`dpmask.rivals` (``tests/test_house.py``
holds it).  The package's top level, ``dpmask.sigma_b``, ``dpmask.release_b``, ..., is this
family's short names.
"""

from __future__ import annotations

from . import bounds, gq, mechanisms, table

__all__ = ["bounds", "gq", "mechanisms", "table"]
