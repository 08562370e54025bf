"""glimmer.runners"""
