"""kubesim tests: run with python3 -m unittest discover -s tests/kubesim/tests -t tests/kubesim."""
