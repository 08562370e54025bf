"""glimmer.backends"""
