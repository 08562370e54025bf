"""glimmer.sim"""
