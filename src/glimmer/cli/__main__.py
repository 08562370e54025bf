from glimmer.cli.app import main

main()
