"""recon's benchmarks (`make bench` = `python -m benchmarks.run`); see docs/performance.md."""
