"""The census of Definition B.1 and Lemma B.2 at initialisation, shared by notebooks 02, 03, 04 and 08.

    sets   Def. B.1 itself: thresholds (eq. 28), the ordinary and lucky sets of a coefficient array, exponents,
           Monte Carlo
    exact  exact expectations of the sets (Lemma B.2) and the paper's own approximations (eqs. 236-238)
    grid   the census on notebook 02's (d, eps_min/eps_max) grid: CensusConfig, run_census, fits, reports

Every public name of the three is importable from here.
"""
from .sets import (STREAM_CENSUS, census_of, check_d, check_ratio, constants, gaussian_coef, mc_census,  # noqa: F401
                   ni_exponent, omega1, omega2, single_exponent, thresholds)
from .exact import (exact_table, expected_Ni, p_B_exact, p_lucky, p_ordinary, p_single, paper_p1,  # noqa: F401
                    paper_p2, paper_p_lucky, paper_pr_B)
from .grid import (CensusConfig, census_fits, census_report, mc_census_multi,  # noqa: F401
                   paper_exponents, pr_b_report, pr_b_trend_report, run_census)
