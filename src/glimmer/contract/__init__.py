"""glimmer.contract"""
