from recon.cli import main

if __name__ == "__main__":  # not when a child process imports it (recon.accounts.processes)
    main()
