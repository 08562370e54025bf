"""glimmer.plan"""
