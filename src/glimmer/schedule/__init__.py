"""glimmer.schedule"""
