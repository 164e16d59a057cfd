"""placeholder"""
class Admission:
    def __init__(self, hosts): pass
    def attach(self, api): pass
    def admit(self, phase, op, user, req, obj, old, dry, options): return obj
    def close(self): pass
