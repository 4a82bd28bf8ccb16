"""Isaac task fixtures: the sim tests' session-wide compile cache and single threads."""

from tests.sim.conftest import _sim_session  # noqa: F401  (autouse session fixture)
