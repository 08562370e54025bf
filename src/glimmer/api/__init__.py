"""glimmer.api"""
