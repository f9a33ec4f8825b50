from stackcheck.cli import run

run()
