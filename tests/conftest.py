"""Test-suite plumbing: markers that sort the checks by what they need, an order that lets the book
build reuse the notebooks nbval has just executed, and the hand-over itself.

Markers (applied here by path and fixture, so that a new test inherits them):

- ``notebook``: a cell of a chapter, run by nbval;
- ``book``: needs the built book (``built_book``, ``full_html``, ``students_html``, ``book_pdf``);
- ``browser``: drives Chromium (``browser``, ``book_pdf``);
- ``cluster``: starts a Dask ``LocalCluster`` (tests/test_cluster.py);
- ``slow``: too long for ``make test``; run by ``make test-slow`` (and CI).  Set by fixture
  (``SLOW_FIXTURES``) or by hand, always with what the check detects;
- ``live``: drives JupyterLab (tests/test_live.py);
- ``publish``: the book's publishing, not the package (tests/test_publish.py: the repository URL,
  the workflow, Binder, the editions);
- ``heavy``: a package test that takes seconds (``HEAVY`` below, each with its time): ``make
  test-slow`` runs it (in its second lane), ``make test`` and ``make test-quick`` do not (issue 31:
  ``make test`` back towards 6 minutes);
- ``beside``: a cell of a chapter that ``make test`` runs in its second lane, beside the first
  (``BESIDE_NOTEBOOKS``: the longest chapters, so that the lanes end together); the first lane's
  book build waits for them (:func:`built_book`).
- ``stress``: a long stress run in subprocesses (tests/test_threads.py), in ``make test-slow``'s
  second lane;
- ``reader``: reads the built book or its portable notebooks and writes nothing
  (``READER_FILES``, and the student edition's sweeps marked by hand), in ``make test-slow``'s
  second lane, beside the first, which writes the student edition and the PDFs.

``make test-quick`` deselects all of them: it is the package's unit, property and doctests that
take well under a second each.  ``make test`` deselects ``slow``, ``live`` and ``heavy``; ``make
test-slow`` runs only those.

Order: the ``beside`` chapters' cells first, then the other tests, then every other chapter's
cells (nbval), then the tests that need the book.  ``make test`` runs the last two in one session
and the others beside it in a second (``tests/lanes.py``, one per core); both hand their notebooks
to the one jupyter-cache (its writes under a file lock), and the first lane's build waits for the
second lane's chapters.  When nbval has run every cell of a notebook without an error, :class:`_NotebookRecorder`
stores the executed notebook in the book's jupyter-cache, exactly as myst-nb's ``cache`` mode
would after executing it with nbclient: the kernel's messages go through nbclient's own
``process_message`` (outputs, display updates, ``clear_output``, widget state with its binary
buffers, the Output-widget mimic), execution counts are numbered as nbclient numbers them, the
kernel's ``language_info`` is stored, and the widget state lands in
``metadata.widgets["application/vnd.jupyter.widget-state+json"]``.  The book build that follows
then finds every notebook in the cache and executes none: no notebook executes twice.
"""

from __future__ import annotations

import copy
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The book tests build into <OUT>/_build (tests/test_book.py); myst-nb keeps its jupyter-cache in
# <OUT>/_build/.jupyter_cache (the html folder's parent).
OUT = Path(os.environ.get("DPMASK_BOOK_OUT", ROOT))
JUPYTER_CACHE = OUT / "_build" / ".jupyter_cache"

MARKERS = {
    "notebook": "a chapter's cell, executed by nbval",
    "book": "needs the built book (jupyter-book build)",
    "browser": "drives Chromium",
    "cluster": "starts a Dask LocalCluster",
    "slow": "too long for `make test`: `make test-slow` (and .ci/run) runs it",
    "live": "drives JupyterLab in Chromium",
    "publish": "the book's publishing (tests/test_publish.py)",
    "heavy": "a package test that takes seconds: in `make test-slow`, not in `make test` or `make test-quick`",
    "beside": "a cell of a chapter that `make test` runs in its second lane (BESIDE_NOTEBOOKS)",
    "stress": "a long stress run in subprocesses (tests/test_threads.py): slow, and run in "
              "`make test-slow`'s JupyterLab lane, which has the time",
    "reader": "reads the built book or its portable notebooks and writes nothing (tests/test_portable_lab.py; "
              "the student edition's axe, HTML_CodeSniffer and keyboard sweeps): `make test-slow` runs it in "
              "its JupyterLab lane, beside the lane that builds the student edition and the PDFs",
}
# Chapters whose glued values are measured afresh by each run (chapter 8's timings, speed-ups and
# memory peaks): a check that runs them again (tests/test_live.py, tests/test_portable.py) asks
# that each value is there and rendered, not that its digits match the book's.
MEASURED_CHAPTERS = frozenset({"08_scale"})
# The chapters `make test` runs in its second lane, beside the package's tests, while the first runs
# the other chapters: the two longest (9 and 7a), so that the first lane's build finds them done
# when its own chapters end (issue 31).  Measured on fresh clones, 29 Nov 2026: with 9 and 7a here
# the first lane's build waited a few seconds (lanes 473 s and 352 s); with chapter 7 here too it
# waited about a minute for them (499 s and 405 s).  Their executions reach the book's jupyter-cache
# before the first lane builds the book (:func:`built_book` waits for them).
BESIDE_NOTEBOOKS = frozenset({"09_rivals.ipynb", "07a_exact_p2.ipynb"})
BOOK_FIXTURES = {"built_book", "full_html", "students_html", "book_pdf", "server"}
BROWSER_FIXTURES = {"browser", "book_pdf"}
CLUSTER_FILES = {"test_cluster.py"}
LIVE_FILES = {"test_live.py"}
PUBLISH_FILES = {"test_publish.py"}
READER_FILES = {"test_portable_lab.py"}  # and, by hand, the student edition's sweeps (last in lane 2)
# `make test-slow` builds the book (`make book`) before its two lanes and sets DPMASK_BOOK_READY=1:
# the fixtures that build it (built_book, portable_notebooks, test_publish's full_html) then use it
# as it is, so that a lane reading it (a `reader` test) never sees the other lane rewrite it.
BOOK_READY = os.environ.get("DPMASK_BOOK_READY") == "1"
# Printing the whole book to PDF through Chromium and reading its ~300 pages back took 264 s of the
# suite's 1,750 s on the loaded machine (15 %, about 120 s of the 787 s idle): more than `make
# test` can hold.  What the PDF check detects: a chapter or a bookmark missing or out of order,
# statements printed outside their chapter, Table 1's numbers, the exercises or solutions
# missing, explorers printed without their saved state, raw TeX left in the text layer, fewer
# than ten figures.  The student edition is a second Sphinx build of the whole book (43 s of the
# 528 s `make test` at load 4-7, about 35 s idle); with the PDF it is the editions' check, which
# `make test-slow` runs.  What it detects: a solution left in any page of the student edition
# (as a solution box or "Solution to" text), an exercise dropped, or any other difference from
# the full edition's page once its solutions are cut out.
SLOW_FIXTURES = {"book_pdf", "students_html"}
# Package tests that take seconds each (wall time on the loaded 2-core machine, 26 Nov 2026, about
# 2.5 times the idle time).  Node-id prefixes; `make test-slow` runs them (since 29 Nov 2026, issue
# 31: they were 687 s of the 1,116 s of `make test`'s second lane), `make test` and `make
# test-quick` do not.
HEAVY = {
    # the property walk: 82 public functions, 250 drawn calls each (60 for the slow ones), 96 s in all;
    # while editing one function, `pytest tests/test_fuzz.py -k <name>` walks it alone
    "tests/test_fuzz.py::test_extremes_give_finite_values_or_named_errors": 96.0,
    "tests/test_project.py::test_cli_": 47.0,  # eleven runs of `python -m dpmask` in a subprocess
    "tests/test_wishart.py::test_sigma_search_on_two_pairs": 14.3,
    "tests/test_wishart.py::test_0f1_matches_mpmath_quadrature_at_large_arguments": 8.8,
    "tests/test_wishart.py::test_likelihood_ratio_integrates_to_one_on_simulated_releases": 7.6,
    "tests/test_wishart.py::test_pair_delta_matches_brute_monte_carlo_of_the_release": 5.6,
    "tests/test_wishart.py::test_rank_one_pair_reduces_to_noncentral_chi_square": 5.5,
    "tests/test_wishart.py::test_pair_delta_at_least_the_projection_statistics": 4.4,
    "tests/test_wishart.py::test_orthogonal_shared_rows_between_the_two_chi_square_curves": 2.1,
    "tests/test_symbolic.py::test_every_check_holds[lemma_5_4]": 7.2,
    "tests/test_symbolic.py::test_every_check_holds[lemma_5_5]": 2.5,
    "tests/test_scale.py::test_bench_scale_quick_runs": 8.9,
    "tests/test_rivals.py::test_bench_rivals_quick_runs": 1.7,
    "tests/test_audit.py::test_tightness_explorer_numbers_bracket_the_truth": 6.8,
    "tests/test_audit.py::test_p1_lower_bound_is_the_exact_value_by_quadrature": 5.3,
    "tests/test_audit.py::test_lower_bound_is_a_real_violation_just_below_it": 2.1,
    "tests/test_inference.py::test_standard_errors_cover_95_percent": 5.4,
    "tests/test_exact.py::test_masked_p1_pair_inverts": 3.5,
    "tests/test_gq.py::test_log_G_matches_mpmath": 3.5,
    "tests/test_widgets.py::test_noise_explorer_initial_state_matches_table1_first_row": 3.4,
    "tests/test_widgets.py::test_noise_explorer_every_slider_updates_the_panel": 2.5,
    "tests/test_scale.py::test_release_b_dask_moments_match_theory": 2.2,
    "tests/test_bounds.py::test_sigma_falls_as_eps_or_delta_grow": 2.0,
    # tests/test_field.py (merged to main after the table above; measured at load 10 on main + this branch)
    "tests/test_field.py::test_adassp_sensitivities_match_a_search_over_the_cube": 10.6,
    "tests/test_field.py::test_jl_worst_case_on_the_arc_is_at_its_ends": 6.6,
    "tests/test_field.py::test_distributed_gram_simulation_loses_the_dropped_shares": 5.5,
    "tests/test_field.py::test_gram_table_rows_have_the_law_of_a_masked_release": 2.9,
    "tests/test_field.py::test_row_software_on_both_tables_gives_the_gram_slopes": 1.8,
    # issue 23 (estimated at load 1 from the same runs at load 30): 1,320 cells x 2,000 releases
    "tests/test_field.py::test_adassp_joint_sum_is_the_supremum_found_by_a_search": 12.0,
    "tests/test_field.py::test_wishart_mechanism_privacy_at_p2_by_the_worst_pair": 4.0,
    "tests/test_field.py::test_rmse_is_refused_where_the_corrected_matrix_is_often_not_pd": 2.0,
    # the safe-side sweep, the tightness explorer's worker, the killed writers (merged later;
    # measured at load 3 on 26 Nov 2026, where `make test-quick` took 108 s with them)
    "tests/test_safe_side.py::test_sigma_b_satisfies_theorem_3_4_at_the_corners": 6.3,
    "tests/test_safe_side.py::test_noncentral_chi_square_far_upper_tail_against_mpmath": 4.0,
    "tests/test_safe_side.py::test_block_and_setting_functions_are_sufficient": 2.0,
    "tests/test_safe_side.py::test_analytic_gaussian_sigma_is_never_too_small": 1.9,
    "tests/test_wishart.py::test_sigma_search_keeps_the_largest_root_over_the_pairs": 4.0,
    "tests/test_widgets.py::test_tightness_": 11.0,  # six tests that start the explorer's worker processes
    "tests/test_exact.py::test_one_minus_delta_just_below_one_against_mpmath": 4.4,
    "tests/test_scale.py::test_a_killed_writer_leaves_a_temporary_that_the_next_write_removes": 7.6,
    "tests/test_scale.py::test_release_b_dask_rows_follow_dense_reference": 1.6,
    "tests/test_edges.py::test_sigma_lower_bound_settles_at_tiny_delta_and_around": 1.6,
    "tests/test_edges.py::test_masked_p1_sigma_settles_at_tiny_delta_and_around": 1.2,
    # issue 25 (measured at load 4 on 27 Nov 2026): the JL sweep against 50-digit mpmath, the
    # reported Gaussian deltas, and the domain walk (each function's corners in subprocesses)
    "tests/test_safe_side.py::test_jl_w_is_never_too_small_at_a_billion_rows": 31.0,
    "tests/test_safe_side.py::test_jl_w_is_never_too_small": 14.3,
    "tests/test_safe_side.py::test_reported_gaussian_deltas_are_upper_bounds": 2.4,
    "tests/test_domain_walk.py::test_every_public_function_has_corners": 5.8,
    "tests/test_fuzz.py::test_rivals_refuse_text_bools_and_non_bool_flags_by_name[data.load_randhie]": 1.1,
    # issue 25 (measured at load 20 on 27 Nov 2026): the explorer's drawing thread (worker
    # processes and a page solved in them, twice) and the mpmath quadratures at seven points
    "tests/test_threads.py::": 77.0,
    "tests/test_ncx2_switch.py::": 35.0,
    # issue 31 (`make test` towards 6 minutes; measured in its second lane on 29 Nov 2026 at load 4-6,
    # beside the first): every other package test of 3 s or more
    "tests/test_cluster.py::test_release_survives_a_killed_worker": 22.5,  # two: a worker killed mid-release
    "tests/test_field.py::test_wishart_delta_is_exact_at_small_eps_where_both_terms_act": 10.9,
    "tests/test_project.py::test_jupyterlab_gets_the_books_explorer_script_from_its_one_source": 9.6,
    "tests/test_publish.py::test_explorer_panels_show_their_numbers_after_every_move[tightness": 9.3,
    "tests/test_publish.py::test_publication_build_refuses_the_placeholder": 8.9,
    "tests/test_publish.py::test_tightness_answers_at_once_and_keeps_only_the_last_setting": 7.8,
    "tests/test_publish.py::test_jupyterlab_reports_every_extension_compatible_and_ours_in_place": 6.6,
    "tests/test_doors.py::test_an_update_checks_at_its_door_only[tightness_explorer]": 6.6,
    "tests/test_safe_side.py::test_masked_p1_sigma_is_never_too_small[1.0-0.999999999998-10]": 6.3,
    "tests/test_safe_side.py::test_masked_p1_sigma_is_never_too_small[0.0001-1e-250-2]": 3.0,
    "tests/test_verdict.py::test_dropout_cost_of_masking_is_recomputed": 6.0,
    "tests/test_scale.py::test_stiefel_frame_dask_is_uniform": 5.8,
    "tests/test_field.py::test_wishart_scale_and_delta_are_on_the_safe_side_at_random_draws_and_corners": 5.8,
    "tests/test_exact.py::test_masked_p1_delta_matches_simulated_releases": 5.4,
    "tests/test_selfcheck.py::test_answers_agree_with_independent_computations": 5.2,
    "tests/test_figures_a11y.py::test_every_live_plot_reads_without_colour": 5.0,
    "tests/test_figures_a11y.py::test_every_static_companion_reads_without_colour[tightness_figure]": 4.6,
    "tests/test_scale.py::test_block_moments_match_theory": 4.5,
    "tests/test_mechanisms.py::test_settings_b_and_c_agree_in_distribution": 4.3,
    "tests/test_scale.py::test_block_rows_follow_dense_haar_reference": 4.1,
    "tests/test_cluster.py::test_default_client_is_used_without_scheduler_argument": 3.6,
    "tests/test_rivals.py::test_rivals_explorer_shows_independently_computed_numbers": 3.5,
    "tests/test_symbolic.py::test_every_check_holds[lemma_a_4]": 3.5,
    "tests/test_cluster.py::test_release_on_worker_processes_is_bit_identical[block]": 3.2,
    # and of 2 s or more, but for the safe-side corners of the privacy numbers (tests/test_safe_side.py),
    # which `make test` keeps
    "tests/test_cli.py::test_exact_line_is_masked_p1_sigma": 2.3,
    "tests/test_cli.py::test_lower_bound_line_is_sigma_lower_bound": 4.7,  # two
    "tests/test_verdict.py::test_rows_masking_needs_are_hundreds_of_millions": 4.7,  # two
    "tests/test_rivals.py::test_sigma_low_large_n_matches_the_exact_projection_bound": 2.9,
    "tests/test_rivals.py::test_gram_sensitivity_is_the_supremum_found_by_optimisation[6]": 2.8,
    "tests/test_rivals.py::test_release_gram_adds_the_noise_to_x_transpose_x": 2.2,
    "tests/test_gq.py::test_mpmath_oracles_agree": 2.6,
    "tests/test_bounds.py::test_analytic_gaussian_attains_the_minimum_in_12_of_36_rows": 2.7,
    "tests/test_mechanisms.py::test_frame_and_dense_paths_agree_in_distribution": 2.4,
    "tests/test_figures_a11y.py::test_every_static_companion_reads_without_colour[inference_figure]": 2.3,
    "tests/test_portable.py::test_glue_num_works_without_myst_nb": 2.9,
    "tests/test_cluster.py::test_a_cluster_leaves_the_environment_of_this_process_as_it_found_it": 2.5,
    "tests/test_doors.py::test_an_update_checks_at_its_door_only[rivals_explorer]": 2.0,
}


def pytest_configure(config):
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    if not config.pluginmanager.has_plugin("dpmask-nbval-hand-over"):
        config.pluginmanager.register(_HandOver(), "dpmask-nbval-hand-over")


def _is_notebook_item(item):
    return item.path is not None and item.path.suffix == ".ipynb"


def pytest_collection_modifyitems(session, config, items):
    """Mark every item by what it needs, then run: the rest, the notebooks, the book."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        name = item.path.name if item.path is not None else ""
        if _is_notebook_item(item):
            item.add_marker(pytest.mark.notebook)
            if name in BESIDE_NOTEBOOKS:
                item.add_marker(pytest.mark.beside)
        if fixtures & BOOK_FIXTURES:
            item.add_marker(pytest.mark.book)
        if fixtures & BROWSER_FIXTURES:
            item.add_marker(pytest.mark.browser)
        if name in CLUSTER_FILES:
            item.add_marker(pytest.mark.cluster)
        if name in LIVE_FILES:
            item.add_marker(pytest.mark.live)
        if name in PUBLISH_FILES:
            item.add_marker(pytest.mark.publish)
        if name in READER_FILES:
            item.add_marker(pytest.mark.reader)
        if fixtures & SLOW_FIXTURES:
            item.add_marker(pytest.mark.slow)
        if any(item.nodeid.startswith(prefix) for prefix in HEAVY):
            item.add_marker(pytest.mark.heavy)
    # A stable partition keeps each notebook's cells together and in order (they share a kernel).
    # A reader of the student edition goes last: in `make test-slow` the other lane builds it
    # (test_publish's students_html), and by then it is built.
    # The chapters run beside go first: their lane's last one tells the other lane's build (a stamp).
    rank = {id(item): (3 if item.get_closest_marker("reader") and "students_html" in getattr(item, "fixturenames", ())
                       else 2 if item.get_closest_marker("book")
                       else -1 if item.get_closest_marker("beside") else 1 if _is_notebook_item(item) else 0)
            for item in items}
    items.sort(key=lambda item: rank[id(item)])


# --- nbval's executions, handed to the book's jupyter-cache ---------------------------------------


class _NotebookRecorder:
    """Rebuild, from the kernel messages nbval reads, the notebook nbclient would have executed.

    nbval sends each cell to its kernel and reads the iopub messages up to the cell's ``idle``
    status; the recorder sees the same messages (it wraps nbval's reader) and feeds the ones of the
    current cell to an ``nbclient.NotebookClient`` that runs no kernel of its own, so outputs and
    widget state are made by the code that makes them in a normal build.
    """

    def __init__(self, nbfile):
        import nbclient

        self.nbfile = nbfile
        self.path = Path(str(nbfile.fspath)).resolve()
        self.nb = copy.deepcopy(nbfile.nb)
        self.code_index = [i for i, cell in enumerate(self.nb.cells) if cell.cell_type == "code"]
        self.client = nbclient.NotebookClient(self.nb, record_timing=False, allow_errors=False)
        self.client.reset_execution_trackers()
        # The Output-widget mimic syncs its state back to the kernel, as it does under nbclient.
        self.client.kc = nbfile.kernel.kc
        self.done = set()
        self.ok = True
        self.problem = None  # why the recording failed, if it did
        self.seconds = 0.0
        self.current = None  # (cell, cell_index, msg_id)
        self.faithful = not any(
            {"skip-execution", "raises-exception"} & set(self.nb.cells[i].metadata.get("tags", []))
            for i in self.code_index
        )
        kernel = nbfile.kernel
        execute, get_message = kernel.execute_cell_input, nbfile.get_kernel_message

        def execute_cell_input(cell_input, allow_stdin=None):
            msg_id = execute(cell_input, allow_stdin=allow_stdin)
            if self.current is not None:
                self.current = self.current[:2] + (msg_id,)
            return msg_id

        def get_kernel_message(timeout=None, stream="iopub"):
            msg = get_message(timeout=timeout, stream=stream)
            if stream == "iopub" and self.current is not None:
                self._process(msg)
            return msg

        kernel.execute_cell_input = execute_cell_input
        nbfile.get_kernel_message = get_kernel_message

    def _process(self, msg):
        from nbclient.exceptions import CellExecutionComplete

        cell, index, msg_id = self.current
        if msg_id is None or msg["parent_header"].get("msg_id") != msg_id or not self.ok:
            return  # nbclient ignores another request's messages too
        try:
            self.client.process_message(msg, cell, index)
        except CellExecutionComplete:
            pass
        except Exception as exc:  # never let the recording fail nbval's test: hand nothing over
            self.ok = False
            self.problem = f"{type(exc).__name__}: {exc}"

    def start(self, item):
        index = self.code_index[item.cell_num]
        cell = self.nb.cells[index]
        if cell.source.strip():  # nbclient sends no empty cell to the kernel and leaves it as it is
            cell.outputs = []
            self.client.clear_before_next_output = False
        self.current = (cell, index, None)
        self.started = time.perf_counter()

    def finish(self, item, passed):
        cell, index, _ = self.current
        self.current = None
        self.seconds += time.perf_counter() - self.started
        if not passed:
            self.ok = False
            return
        if not cell.source.strip():
            self.nb.cells[index] = copy.deepcopy(self.nbfile.nb.cells[index])
        else:
            # nbval runs cells with store_history=False; nbclient stores history, so its kernel
            # numbers cells 1, 2, ... and so does the execute_result of each.
            self.client.code_cells_executed += 1
            cell.execution_count = self.client.code_cells_executed
            for out in cell.outputs:
                if out.get("output_type") == "execute_result":
                    out["execution_count"] = cell.execution_count
        self.done.add(item.cell_num)
        if len(self.done) == len(self.code_index) and self.ok and self.faithful:
            try:
                self._store()
            except Exception as exc:  # the book build then executes this notebook itself
                self.problem = f"{type(exc).__name__}: {exc}"
                return False
            return True
        return False

    def _language_info(self):
        kc = self.nbfile.kernel.kc
        msg_id = kc.kernel_info()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            reply = kc.get_shell_msg(timeout=60)
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply["content"]["language_info"]
        raise TimeoutError("the kernel did not answer kernel_info")

    def _store(self):
        from jupyter_cache import get_cache
        from jupyter_cache.base import CacheBundleIn, CachingError

        self.nb.metadata["language_info"] = self._language_info()
        self.client.set_widgets_metadata()
        # A record of the same code is kept, not replaced: the book already built may have been
        # rendered from it, and an incremental build does not re-read an unchanged page, so a
        # replaced record (chapter 8's timings) would make the student edition, built afresh from
        # the cache, differ from the full edition's page.
        import fcntl

        # both lanes of `make test` write here (BESIDE_NOTEBOOKS): one writer at a time, so that
        # neither meets the other's half-made SQLite database on a fresh clone
        JUPYTER_CACHE.parent.mkdir(parents=True, exist_ok=True)
        with open(JUPYTER_CACHE.parent / ".jupyter-cache-lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                get_cache(str(JUPYTER_CACHE)).cache_notebook_bundle(
                    CacheBundleIn(self.nb, str(self.path), data={"execution_seconds": self.seconds}),
                    check_validity=False,
                    overwrite=False,
                )
            except CachingError:
                pass


def _recorder(item):
    nbfile = item.parent
    rec = getattr(nbfile, "_dpmask_recorder", None)
    if rec is None and getattr(nbfile, "kernel", None) is not None:
        try:
            rec = _NotebookRecorder(nbfile)
        except Exception as exc:  # nbval or nbclient changed: record nothing, fail no test
            rec = False
            item.warn(pytest.PytestWarning(f"nbval's executions cannot be recorded ({exc!r}); the book "
                                           "build will execute the notebooks again"))
        nbfile._dpmask_recorder = rec
    return rec or None


class _HandOver:
    """The plugin that records nbval's notebooks (registered globally: the chapters lie outside tests/,
    where a conftest's own per-item hooks would not reach)."""

    def __init__(self):
        self.stored = set()  # the notebooks (resolved paths) handed to the jupyter-cache this session
        self.last_beside = None  # this session's last cell of a BESIDE_NOTEBOOKS chapter, if it runs any

    def pytest_collection_finish(self, session):
        beside = [item.nodeid for item in session.items if item.get_closest_marker("beside")]
        self.last_beside = beside[-1] if beside else None

    def pytest_runtest_logfinish(self, nodeid, location):
        if nodeid == self.last_beside:
            _beside_done()

    def pytest_sessionfinish(self, session, exitstatus):
        if self.last_beside is not None:  # stopped early (-x, a crash in a cell): the other lane goes on
            _beside_done()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item):
        rec = _recorder(item) if _is_notebook_item(item) and hasattr(item, "cell_num") else None
        if rec is None:
            return (yield)
        rec.start(item)
        try:
            result = yield
        except BaseException:
            rec.finish(item, passed=False)
            raise
        if rec.finish(item, passed=True):
            self.stored.add(rec.path)
        elif rec.problem is not None and not getattr(rec, "warned", False):
            rec.warned = True
            item.warn(pytest.PytestWarning(
                f"{rec.path.name} is not handed to the book's jupyter-cache ({rec.problem}); the "
                "book build will execute it again"))
        return result


# `make test`'s hand-over between its lanes (BESIDE_NOTEBOOKS): the second lane writes this stamp, the
# run's DPMASK_RUN, when its chapters have run (passed or not); the first lane's build waits for it.
BESIDE_STAMP = OUT / "_build" / ".beside-run"
BESIDE_WAIT = 1800  # seconds; then the build goes on and executes what the cache lacks


def _beside_done():
    run = os.environ.get("DPMASK_RUN", "")
    if run:
        BESIDE_STAMP.parent.mkdir(parents=True, exist_ok=True)
        BESIDE_STAMP.write_text(run)


def _beside_ran():
    """Whether the second lane of this run (DPMASK_RUN) has written its stamp."""
    run = os.environ.get("DPMASK_RUN", "")
    return bool(run) and BESIDE_STAMP.exists() and BESIDE_STAMP.read_text() == run


def _wait_for_the_beside_chapters(session_items, warn):
    """In `make test`'s first lane (DPMASK_LANE=1, DPMASK_RUN set), wait until the second lane has run
    the BESIDE_NOTEBOOKS chapters that this session leaves out, so that the build finds them in the
    cache; return the seconds waited."""
    if (os.environ.get("DPMASK_LANE") != "1" or not os.environ.get("DPMASK_RUN")
            or any(i.get_closest_marker("beside") for i in session_items)):
        return 0.0
    t0 = time.monotonic()
    while not _beside_ran():
        if time.monotonic() - t0 > BESIDE_WAIT:
            warn(pytest.PytestWarning(f"the second lane did not run {sorted(BESIDE_NOTEBOOKS)} within {BESIDE_WAIT} s: "
                                      "the build executes what the cache lacks"))
            break
        time.sleep(2)
    return time.monotonic() - t0


# The strict build, once per session, for every test that needs the built book (tests/test_book.py,
# tests/test_doubled_words.py): a fixture imported into a second module would be a second fixture
# and build the book a second time.
@pytest.fixture(scope="session")
def built_book(request):
    """Build the book once per session with the strict flags; return the build log.

    The chapters' nbval cells run before this (tests/conftest.py orders them so; in ``make test``
    the second lane runs BESIDE_NOTEBOOKS, and this waits for them) and hand each notebook they ran
    in full to the book's jupyter-cache, so the build executes none of them again; a notebook that
    nbval ran and the build still executed fails here (the cache missed, e.g. because its
    execution mode is no longer ``cache``).
    """
    if BOOK_READY:
        if not (OUT / "_build" / "html" / "index.html").exists():
            pytest.fail("DPMASK_BOOK_READY=1 but the book is not built: run `make book` first")
        return "(built by `make book` before this session: DPMASK_BOOK_READY=1)"
    waited = _wait_for_the_beside_chapters(request.session.items, request.node.warn)
    if waited > 1:
        print(f"built_book: waited {waited:.0f} s for the other lane's chapters")
    cmd = [
        str(Path(sys.executable).with_name("jupyter-book")),
        "build",
        str(ROOT),
        "--path-output",
        str(OUT),
        "-W",
        "-n",
        "--keep-going",
    ]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=3600)
    log = res.stdout + res.stderr
    if res.returncode != 0:
        tail = "\n".join(log.splitlines()[-60:])
        pytest.fail(f"jupyter-book build failed (status {res.returncode}):\n{tail}")
    hand_over = request.config.pluginmanager.get_plugin("dpmask-nbval-hand-over")
    handed = set(hand_over.stored) if hand_over is not None else set()
    if _beside_ran():
        handed |= {(ROOT / "chapters" / name).resolve() for name in BESIDE_NOTEBOOKS}  # the other lane ran them
    executed = re.findall(r"(\S+\.ipynb): (?:Executing notebook|Starting inline execution client)", log)
    again = sorted(Path(p).resolve() for p in executed)
    again = [str(p.relative_to(ROOT)) for p in again if p in handed]
    if again:
        pytest.fail(f"the build executed again notebooks that nbval had just run: {again} (their "
                    "jupyter-cache entry did not match, or their execution mode is not `cache`)")
    return log


# Chromium, once per test file.  Module scope, never session: a sync Playwright left running by one
# file makes the next file's fail to start ("Sync API inside the asyncio loop"; tests/test_lanes.py).
# Skipped without Chromium, and .ci/run fails a run that skipped so.
@pytest.fixture(scope="module")
def browser():
    from _ext_import import ext_module

    localhost = ext_module("localhost")
    if localhost.CHROMIUM is None:
        pytest.skip("browser tests need Chromium: install Debian's package with "
                    "`apt-get update && apt-get install -y chromium` (CI does this in .ci/run)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=localhost.CHROMIUM, headless=True, args=localhost.CHROMIUM_ARGS)
        yield b
        b.close()


# The portable notebooks (issue 29), once per session for every module that reads them
# (tests/test_portable.py through nbconvert, tests/test_portable_lab.py in JupyterLab).
@pytest.fixture(scope="session")
def portable_notebooks(built_book):
    """The build step of `make book` (``_ext/portable.py``), run on the book just built."""
    if BOOK_READY:  # `make book` wrote them before this session
        return OUT / "_build" / "portable"
    res = subprocess.run([sys.executable, str(ROOT / "_ext" / "portable.py")], capture_output=True, text=True,
                         cwd=ROOT, timeout=1200)
    assert res.returncode == 0, res.stdout + res.stderr
    return OUT / "_build" / "portable"


def _publish_env():
    """The environment of a build: no publishing or edition switch of the caller's, the repository importable."""
    env = {k: v for k, v in os.environ.items() if k not in ("DPMASK_PUBLISH", "DPMASK_EDITION")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    return env


# --- the HTML editions (test_publish.py, test_keyboard.py) -----------------------------------------


@pytest.fixture(scope="session")
def full_html():
    if BOOK_READY:  # `make test-slow` built it first (tests/conftest.py)
        assert (OUT / "_build" / "html" / "index.html").exists(), "DPMASK_BOOK_READY=1 but the book is not built: run `make book`"
        return OUT / "_build" / "html"
    cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(ROOT), "--path-output", str(OUT), "-W", "-n", "--keep-going"]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=_publish_env(), timeout=3600)
    if res.returncode != 0:
        pytest.fail("jupyter-book build failed:\n" + "\n".join((res.stdout + res.stderr).splitlines()[-40:]))
    return OUT / "_build" / "html"


@pytest.fixture(scope="session")
def students_html(full_html):
    """The student edition, built once per run.

    In `make test-slow` both lanes ask for it: lane 1 checks and prints it, lane 2 sweeps it with
    axe-core, HTML_CodeSniffer and the keyboard walk at its end (those tests are ``reader``; tests/conftest.py runs
    them last).  The first lane to ask builds it while holding a lock; the other waits on the lock
    and takes it as built in this run (``DPMASK_RUN``, set once by the Makefile for both lanes)."""
    run = os.environ.get("DPMASK_RUN", "") if BOOK_READY else ""
    if not run:
        return _build_students()
    import fcntl

    (OUT / "_build").mkdir(parents=True, exist_ok=True)
    stamp = OUT / "_build" / ".students-run"
    with open(OUT / "_build" / ".students-lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if stamp.exists() and stamp.read_text() == run:
            return OUT / "_build" / "students" / "html"
        built = _build_students()
        stamp.write_text(run)
        return built


def _build_students():
    res = subprocess.run(
        [sys.executable, str(ROOT / "_ext" / "editions.py"), "students"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=_publish_env(),
        timeout=1800,
    )
    log = res.stdout + res.stderr
    assert res.returncode == 0, log[-3000:]
    # Every notebook came from the full edition's cache: nothing ran twice.
    assert "Executing notebook" not in log
    assert len(list((OUT / "_build" / "students" / "notebooks" / "chapters").glob("*.ipynb"))) == len(list((ROOT / "chapters").glob("*.ipynb")))
    return OUT / "_build" / "students" / "html"
