"""glimmer.sinks"""
