"""glimmer.engine"""
