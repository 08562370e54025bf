"""glimmer.fleet"""
