"""recon's Prefect flows: the one part of recon that imports Prefect.

Nothing in recon imports this package: the CLI loads `orchestrator` through the
`recon.orchestrator` entry point (see `recon.orchestrator`). Importing it is cheap; Prefect
itself is imported only inside a session, once its server is up.
"""

from pipelines.orchestrator import PrefectOrchestrator

__all__ = ["PrefectOrchestrator", "orchestrator"]

orchestrator = PrefectOrchestrator()
