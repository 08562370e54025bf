"""glimmer.reports"""
