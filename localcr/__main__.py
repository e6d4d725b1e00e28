from localcr.cli import main

main()
