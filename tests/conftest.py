"""Shared test configuration: the hypothesis profiles.

"ci" is the default (CI runs it too): a few hundred examples over all property tests,
derandomized and without an example database, so every run tests the same examples and
a failure reproduces anywhere. "long" searches far more (`--hypothesis-profile=long`),
with the database on so a failure it finds replays on the next run.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=(HealthCheck.too_slow,),
)
settings.register_profile(
    "long",
    max_examples=2000,
    deadline=None,
    print_blob=True,
    suppress_health_check=(HealthCheck.too_slow,),
)
settings.load_profile("ci")  # pytest's --hypothesis-profile=NAME loads NAME afterwards
