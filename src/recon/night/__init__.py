"""The night's steps: start → extract → land → load → check → publish → report → alert.

Each module is one step or what it stands on (landing, the warehouse and its migrations,
the reachability probe, progress); `recon.night.nightly` writes their order once.
"""
