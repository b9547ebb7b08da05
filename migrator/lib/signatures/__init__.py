"""Error-notebook signatures, without Django: validating a signature before it is stored,
normalising text signatures and log lines alike (so one machine's message matches another's),
matching thousands of signatures against a build log in one prefiltered pass, proposing a
signature from a failing line, picking out the lines that state a stage's failure, fingerprinting
the failures no entry explains yet, and loading the seed entries shipped with Migrator.
"""
