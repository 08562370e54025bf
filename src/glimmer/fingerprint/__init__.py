"""glimmer.fingerprint"""
