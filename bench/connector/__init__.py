"""The Nextcloud connector, measured from outside (`python -m bench.connector`): `run` the
command and its results, `measure` the measurements against the real `serve`, `probes` what
watches it meanwhile (searches, memory, CPU, a py-spy profile), `world` the files in the
Nextcloud dialect."""
