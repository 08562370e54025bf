"""glimmer.certify"""
