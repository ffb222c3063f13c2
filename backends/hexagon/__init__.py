"""hexagon"""
