# All metadata lives in setup.cfg; this shim lets older pip versions and
# `python setup.py develop` find it.
from setuptools import setup

setup()
