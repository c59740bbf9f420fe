"""The generated records of the sandbox, one module per resource (see recon.sandbox.data)."""
