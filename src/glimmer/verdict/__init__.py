"""glimmer.verdict"""
