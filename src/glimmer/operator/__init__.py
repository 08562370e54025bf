"""glimmer.operator"""
